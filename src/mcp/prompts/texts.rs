//! The prompts, as data: the dealership workflows a host offers as slash
//! commands. Each names the tools it relies on (a caller sees the prompt
//! only if it may use every one of them) and a text with placeholders:
//!
//! - `{argument}` is the argument's value; a line naming an optional
//!   argument that was not given is left out;
//! - `{tool:inventory.search}` is the tool's name as `tools/list` shows it.
//!
//! The texts tell the agent which tools to call in order and never supply
//! customer data: the agent asks the customer.

/// What `completion/complete` offers for an argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Completes {
    /// Dealership ids the caller may use with this prompt.
    Dealership,
    /// Makes for sale at the dealership in `dealership_id`.
    Make,
    /// Models for sale there (of `make`, when given).
    Model,
    /// Nothing (free text, or customer data the bridge must not suggest).
    Nothing,
}

pub struct Argument {
    pub name: &'static str,
    pub description: &'static str,
    pub required: bool,
    pub completes: Completes,
}

pub struct PromptText {
    pub name: &'static str,
    pub title: &'static str,
    pub description: &'static str,
    pub arguments: &'static [Argument],
    /// Canonical names of the tools the text tells the agent to call.
    pub tools: &'static [&'static str],
    pub text: &'static str,
}

const DEALERSHIP: Argument = Argument {
    name: "dealership_id",
    description: "The dealership (from dealership_list).",
    required: true,
    completes: Completes::Dealership,
};

pub const PROMPTS: &[PromptText] = &[
    PromptText {
        name: "find_vehicle_and_test_drive",
        title: "Find a vehicle and arrange a test drive",
        description: "Search a dealership's vehicles for sale with the customer, confirm the one they pick, and request a test drive as a lead (with their consent).",
        arguments: &[
            DEALERSHIP,
            Argument {
                name: "make",
                description: "The make the customer wants, e.g. Honda.",
                required: false,
                completes: Completes::Make,
            },
            Argument {
                name: "model",
                description: "The model the customer wants, e.g. Civic.",
                required: false,
                completes: Completes::Model,
            },
            Argument {
                name: "budget",
                description: "The most the customer wants to pay, in the dealership's currency, e.g. 30000.",
                required: false,
                completes: Completes::Nothing,
            },
        ],
        tools: &["inventory.search", "inventory.get", "leads.create"],
        text: "\
Help a customer find a vehicle for sale at dealership {dealership_id} and arrange a test drive.
1. Call {tool:inventory.search} with dealership_id \"{dealership_id}\" and filters for what the customer wants:
   - make: [\"{make}\"]
   - model: [\"{model}\"]
   - price_max: a budget of {budget} in the dealership's currency, sent in minor units (for USD, cents: the amount times 100)
   Show the customer a few matches with price and mileage; pass next_cursor back as cursor if they want more.
2. When the customer picks a vehicle, call {tool:inventory.get} with its vehicle_id to confirm it is still for sale. If it answers inventory.vehicle_unavailable, it has been sold: go back to step 1.
3. To arrange the test drive, call {tool:leads.create} with that vehicle as vehicle_of_interest and an appointment of appointment_type \"test_drive\" at the time the customer prefers. First ask the customer for their name, how to reach them and their consent (consent.scope [\"lead_submission\"], the channels they allow, the exact text they agreed to). Never invent or guess customer details, and send nothing without their consent.
4. Tell the customer the dealership will confirm the time: the lead requests a test drive, it does not book one.",
    },
    PromptText {
        name: "value_trade_in",
        title: "Value a trade-in",
        description: "Estimate what a customer's vehicle is worth as a trade-in, from the dealership's valuation provider.",
        arguments: &[
            DEALERSHIP,
            Argument {
                name: "vin",
                description: "The trade-in's 17-character VIN.",
                required: true,
                completes: Completes::Nothing,
            },
            Argument {
                name: "mileage",
                description: "The odometer reading in miles, e.g. 42000.",
                required: true,
                completes: Completes::Nothing,
            },
            Argument {
                name: "condition",
                description: "The customer's view of the condition: excellent, good, fair or poor.",
                required: false,
                completes: Completes::Nothing,
            },
        ],
        tools: &["deals.request_trade_value"],
        text: "\
Estimate the trade-in value of the customer's vehicle at dealership {dealership_id}.
1. Call {tool:deals.request_trade_value} with dealership_id \"{dealership_id}\", vin \"{vin}\" and mileage {\"value\": {mileage}, \"unit\": \"mi\"}.
   Also send condition \"{condition}\".
2. Give the customer the low, average and high trade-in values (amounts are in minor units: for USD, cents) and until when the estimate stands. Say clearly that it is an estimate from the valuation provider, not an offer: the dealership makes the offer after seeing the vehicle.
3. If it answers deals.trade_value_unavailable, the provider has no values for this vehicle: tell the customer the dealership can appraise it in person.",
    },
    PromptText {
        name: "book_service",
        title: "Book service for a car",
        description: "Find an open service slot for the customer's car and book it in the dealership's scheduler (with their consent).",
        arguments: &[
            DEALERSHIP,
            Argument {
                name: "service",
                description: "What the car needs: a service code from the dealership's menu (e.g. 01LOF) or a short description (e.g. oil change).",
                required: true,
                completes: Completes::Nothing,
            },
            Argument {
                name: "vin",
                description: "The car's 17-character VIN, if the customer has it.",
                required: false,
                completes: Completes::Nothing,
            },
            Argument {
                name: "make",
                description: "The car's make, when there is no VIN.",
                required: false,
                completes: Completes::Make,
            },
            Argument {
                name: "model",
                description: "The car's model, when there is no VIN.",
                required: false,
                completes: Completes::Model,
            },
            Argument {
                name: "preferred_date",
                description: "The day the customer would like, YYYY-MM-DD.",
                required: false,
                completes: Completes::Nothing,
            },
        ],
        tools: &["service.check_availability", "service.book_appointment"],
        text: "\
Book a service appointment at dealership {dealership_id} for: {service}.
1. Call {tool:service.check_availability} with dealership_id \"{dealership_id}\", the service code(s) for \"{service}\" and the customer's car:
   - vin \"{vin}\"
   - make \"{make}\" (ask the customer for the year)
   - model \"{model}\"
   - from and to around {preferred_date}
   If the service code is unknown, the answer lists the dealership's service menu in details.service_menu: pick the matching code and call again.
2. Offer the customer a few of the open slots and let them choose one.
3. Call {tool:service.book_appointment} with the chosen start, the same service codes and car, and the customer's details. First ask the customer for their name, how to reach them and their consent (consent.scope [\"service_appointment\"], the channels they allow, the exact text they agreed to). Never invent or guess customer details, and book nothing without their consent.
4. Report what it answers: booked or waitlisted (with the appointment_id), proposed (offer the proposed_times instead), or requested (the dealership will confirm a time). If it answers service.slot_unavailable, offer the next open slots it lists.",
    },
    PromptText {
        name: "follow_up_lead",
        title: "Follow up a lead",
        description: "See where a lead sent through the bridge stands and whether its vehicle is still for sale.",
        arguments: &[
            DEALERSHIP,
            Argument {
                name: "lead_id",
                description: "The lead_id leads_create answered.",
                required: true,
                completes: Completes::Nothing,
            },
        ],
        tools: &["leads.get", "inventory.get", "inventory.search"],
        text: "\
Follow up lead {lead_id} at dealership {dealership_id}.
1. Call {tool:leads.get} with dealership_id \"{dealership_id}\" and lead_id \"{lead_id}\". Report where its delivery to the dealership's CRM stands (pending, delivered or failed) and any appointment it requested. Customer details come back masked: do not try to fill them in.
2. If the lead names a vehicle of interest with a vehicle_id or VIN, call {tool:inventory.get} for it to check it is still for sale.
3. If it has been sold (inventory.vehicle_unavailable), call {tool:inventory.search} with the same make and model to find similar vehicles to suggest.
4. If the lead answers leads.lead_not_found, it was not sent by you through the bridge: say so, and do not guess its contents.",
    },
];
