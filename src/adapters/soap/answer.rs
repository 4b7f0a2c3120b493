//! Reading a SOAP reply: credentials refused, faults (on HTTP 500 or 200),
//! other error statuses, documents that are not XML, and STAR-style in-band
//! statuses all become an [`AdapterError`]; anything else is the document as a
//! tree. Nothing from the body reaches the error or the log except codes the
//! profile's tables know.

use serde_json::Value;

use super::envelope::{self, Fault};
use super::profile::SoapErrorSpec;
use super::xml;
use crate::adapters::http::{self, Reply};
use crate::adapters::mapping::ValuePath;
use crate::adapters::mapping::path::scalar_text;
use crate::adapters::{AdapterError, ErrorClass};

/// A compiled in-band status check.
#[derive(Debug, Clone)]
pub(super) struct StatusCheck {
    pub path: ValuePath,
    pub success: String,
}

/// Who is reading, for the log.
#[derive(Debug, Clone, Copy)]
pub(super) struct Reader<'a> {
    pub profile: &'a str,
    pub operation: &'a str,
    pub errors: &'a SoapErrorSpec,
}

impl Reader<'_> {
    /// The reply as a tree, or what went wrong.
    pub fn read(
        &self,
        reply: &Reply,
        status_check: Option<&StatusCheck>,
    ) -> Result<Value, AdapterError> {
        let (profile, operation) = (self.profile, self.operation);
        let status = reply.status.as_u16();
        // The credentials are refused before any SOAP processing; a body here is
        // usually an HTML error page.
        if matches!(status, 401 | 403) {
            tracing::warn!(
                profile,
                operation,
                status,
                "Upstream refused the bridge's credentials."
            );
            return Err(AdapterError::Unauthorized { status });
        }
        let doc = xml::to_json(&reply.body);
        if let Ok(doc) = &doc
            && let Some(fault) = envelope::fault(doc)
        {
            return Err(self.fault_error(&fault, reply));
        }
        if !reply.status.is_success() {
            tracing::warn!(
                profile,
                operation,
                status,
                "Upstream answered with an error status."
            );
            return Err(http::status_error(reply.status, &reply.headers, None));
        }
        let doc = doc.map_err(|e| {
            // The XmlError carries a byte position and at most an element name.
            tracing::warn!(profile, operation, status, bytes = reply.body.len(), reason = %e, "Upstream answer is not readable XML.");
            AdapterError::InvalidResponse(format!("not readable XML: {e}"))
        })?;
        if envelope::body(&doc).is_none() {
            tracing::warn!(
                profile,
                operation,
                status,
                "Upstream answer is not a SOAP envelope."
            );
            return Err(AdapterError::InvalidResponse("not a SOAP envelope".into()));
        }
        if let Some(check) = status_check {
            self.check_status(check, &doc, reply)?;
        }
        Ok(doc)
    }

    /// The fault's class: the subcode, then the code, as the profile maps them;
    /// else by who the fault blames.
    fn fault_error(&self, fault: &Fault, reply: &Reply) -> AdapterError {
        let status = reply.status.as_u16();
        let known = fault
            .subcode
            .iter()
            .chain([&fault.code])
            .find_map(|c| self.errors.faults.get(c).map(|class| (c.as_str(), *class)));
        let by_blame = match fault.code.as_str() {
            "Receiver" | "Server" => ErrorClass::Unavailable,
            _ => ErrorClass::Rejected,
        };
        let (key, class) = known.unwrap_or(("", by_blame));
        // Fault codes are protocol or vendor enums; the reason text may quote
        // request data, so it is never logged.
        tracing::warn!(profile = self.profile, operation = self.operation, status, fault = key, class = ?class, "Upstream answered with a SOAP fault.");
        self.class_error(class, status, key, reply)
    }

    /// Fails unless the in-band status says success.
    fn check_status(
        &self,
        check: &StatusCheck,
        doc: &Value,
        reply: &Reply,
    ) -> Result<(), AdapterError> {
        let found = check.path.first(doc).and_then(scalar_text);
        if found.as_deref() == Some(check.success.as_str()) {
            return Ok(());
        }
        let status = reply.status.as_u16();
        let known = found
            .as_deref()
            .and_then(|code| self.errors.codes.get_key_value(code));
        let (code, class) = known.map_or(("", ErrorClass::Rejected), |(c, k)| (c.as_str(), *k));
        tracing::warn!(profile = self.profile, operation = self.operation, status, vendor_code = code, class = ?class, "Upstream reported an in-band error.");
        Err(self.class_error(class, status, code, reply))
    }

    fn class_error(
        &self,
        class: ErrorClass,
        status: u16,
        code: &str,
        reply: &Reply,
    ) -> AdapterError {
        let vendor = (!code.is_empty()).then_some(code);
        match class.error(status, code, http::retry_after(&reply.headers)) {
            Some(AdapterError::Rejected { status, .. }) => AdapterError::Rejected {
                status,
                vendor_code: vendor.map(str::to_owned),
            },
            Some(error) => error,
            // Rejected when the profile is built: SOAP has no token to refresh.
            None => AdapterError::Unauthorized { status },
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use bytes::Bytes;
    use reqwest::StatusCode;
    use reqwest::header::HeaderMap;

    use super::*;

    fn reply(status: u16, body: &str) -> Reply {
        Reply {
            status: StatusCode::from_u16(status).unwrap(),
            headers: HeaderMap::new(),
            body: Bytes::from(body.to_owned()),
        }
    }

    fn read(status: u16, body: &str, check: Option<&StatusCheck>) -> Result<Value, AdapterError> {
        let errors = SoapErrorSpec {
            faults: BTreeMap::from([("FailedAuthentication".to_owned(), ErrorClass::Unauthorized)]),
            codes: BTreeMap::from([("42".to_owned(), ErrorClass::Unavailable)]),
        };
        let reader = Reader {
            profile: "p",
            operation: "op",
            errors: &errors,
        };
        reader.read(&reply(status, body), check)
    }

    const FAULT11: &str = r#"<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body><s:Fault><faultcode>s:CODE</faultcode><faultstring>Jane Doe 555-0100</faultstring></s:Fault></s:Body></s:Envelope>"#;

    #[test]
    fn faults_by_table_then_by_blame() {
        let client = FAULT11.replace("s:CODE", "s:Client");
        assert_eq!(
            read(500, &client, None),
            Err(AdapterError::Rejected {
                status: 500,
                vendor_code: None
            })
        );
        let server = FAULT11.replace("s:CODE", "s:Server");
        assert!(matches!(
            read(200, &server, None),
            Err(AdapterError::Unavailable(_))
        ));
        let known = FAULT11.replace("s:CODE", "wsse:FailedAuthentication");
        assert_eq!(
            read(500, &known, None),
            Err(AdapterError::Unauthorized { status: 500 })
        );
    }

    #[test]
    fn statuses_and_unreadable_answers() {
        assert_eq!(
            read(403, "<html/>", None),
            Err(AdapterError::Unauthorized { status: 403 })
        );
        assert!(matches!(
            read(502, "oops", None),
            Err(AdapterError::Unavailable(_))
        ));
        assert!(matches!(
            read(200, "oops", None),
            Err(AdapterError::InvalidResponse(_))
        ));
        assert!(matches!(
            read(200, "<a/>", None),
            Err(AdapterError::InvalidResponse(_))
        ));
        let doctype = "<!DOCTYPE x [<!ENTITY e 'x'>]><Envelope><Body/></Envelope>";
        assert!(matches!(
            read(200, doctype, None),
            Err(AdapterError::InvalidResponse(_))
        ));
    }

    #[test]
    fn in_band_status() {
        let check = StatusCheck {
            path: ValuePath::parse("/Envelope/Body/R/TransStatus/StatusCode").unwrap(),
            success: "0".into(),
        };
        let answer = |code: &str| {
            format!(
                "<Envelope><Body><R><TransStatus><StatusCode>{code}</StatusCode></TransStatus></R></Body></Envelope>"
            )
        };
        assert!(read(200, &answer("0"), Some(&check)).is_ok());
        assert!(matches!(
            read(200, &answer("42"), Some(&check)),
            Err(AdapterError::Unavailable(_))
        ));
        assert_eq!(
            read(200, &answer("7"), Some(&check)),
            Err(AdapterError::Rejected {
                status: 200,
                vendor_code: None
            })
        );
        let missing = "<Envelope><Body><R/></Body></Envelope>";
        assert!(read(200, missing, Some(&check)).is_err());
    }
}
