-- wrk script: the mock CDK inventory request exactly as the bridge sends it.
wrk.method = "GET"
wrk.headers["Authorization"] = "Bearer demo-access-token"
wrk.headers["Subscription-Id"] = "7f1c4c52-5a0e-4c61-9a57-0d6c9d7b0c11"
wrk.headers["Request-Id"] = "3f2b8f44-0000-4000-8000-000000000000"
wrk.headers["Accept"] = "application/json"

done = require("report").done
