//! ADF by e-mail: the document is the whole `text/plain` body, which is what
//! CRM lead mailboxes parse. SMTP 250 is acceptance; a 5xx reply is a refusal
//! of this message, a 4xx or a broken connection is worth another attempt.

use std::path::Path;

use lettre::message::header::{ContentTransferEncoding, ContentType};
use lettre::message::{Mailbox, SinglePart};
use lettre::transport::smtp::authentication::Credentials;
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};
use secrecy::ExposeSecret;

use super::{DeliveryReceipt, LeadDelivery};
use crate::adapters::{AdapterError, BuildError};
use crate::config::{AdfEmailConfig, SmtpTls, resolve_secret};

pub struct EmailIntake {
    transport: AsyncSmtpTransport<Tokio1Executor>,
    from: Mailbox,
    to: Vec<Mailbox>,
    subject: String,
}

impl EmailIntake {
    pub fn build(config: &AdfEmailConfig, base: &Path) -> Result<Self, Vec<BuildError>> {
        let mut problems = Vec::new();
        let builder = match config.tls {
            SmtpTls::Starttls => {
                AsyncSmtpTransport::<Tokio1Executor>::starttls_relay(&config.smtp_host)
            }
            SmtpTls::Tls => AsyncSmtpTransport::<Tokio1Executor>::relay(&config.smtp_host),
            SmtpTls::None => Ok(AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous(
                &config.smtp_host,
            )),
        };
        let mut builder = match builder {
            Ok(b) => b.port(config.smtp_port).timeout(Some(config.timeout)),
            Err(e) => return Err(vec![BuildError::at_key("smtp_host", e)]),
        };
        if let (Some(user), Some(password)) = (&config.username, &config.password) {
            match (resolve_secret(user, base), resolve_secret(password, base)) {
                (Ok(u), Ok(p)) => {
                    builder = builder.credentials(Credentials::new(
                        u.expose_secret().to_owned(),
                        p.expose_secret().to_owned(),
                    ));
                }
                (u, p) => problems.extend(
                    [("username", u.err()), ("password", p.err())]
                        .into_iter()
                        .filter_map(|(k, e)| e.map(|e| BuildError::at_key(k, e))),
                ),
            }
        }
        let from = config
            .from
            .parse::<Mailbox>()
            .map_err(|e| problems.push(BuildError::at_key("from", e)))
            .ok();
        let to: Vec<Mailbox> = config
            .to
            .iter()
            .enumerate()
            .filter_map(|(i, t)| {
                t.parse::<Mailbox>()
                    .map_err(|e| problems.push(BuildError::at_key(format!("to[{i}]"), e)))
                    .ok()
            })
            .collect();
        match from {
            Some(from) if problems.is_empty() => Ok(Self {
                transport: builder.build(),
                from,
                to,
                subject: config.subject.clone(),
            }),
            _ => Err(problems),
        }
    }

    pub async fn send(&self, lead: &LeadDelivery<'_>) -> Result<DeliveryReceipt, AdapterError> {
        let message_id = format!(
            "<{}.{}@dms-bridge>",
            lead.lead_id,
            uuid::Uuid::new_v4().simple()
        );
        let mut message = Message::builder()
            .from(self.from.clone())
            .subject(self.subject.replace("{lead_id}", lead.lead_id))
            .message_id(Some(message_id.clone()));
        for to in &self.to {
            message = message.to(to.clone());
        }
        let message = message
            .singlepart(body(lead.document))
            .map_err(|e| AdapterError::InvalidResponse(format!("cannot build the e-mail: {e}")))?;
        self.transport
            .send(message)
            .await
            .map(|_| DeliveryReceipt {
                reference: Some(message_id),
            })
            .map_err(|e| classify(&e))
    }
}

/// The document as a `text/plain` UTF-8 part, in 8bit when its lines allow
/// (CRMs that read the raw body see the XML itself), otherwise encoded.
fn body(document: &str) -> SinglePart {
    let part = SinglePart::builder().header(ContentType::TEXT_PLAIN);
    let eight_bit = lettre::message::Body::new_with_encoding(
        document.to_owned(),
        ContentTransferEncoding::EightBit,
    );
    match eight_bit {
        Ok(b) => part.body(b),
        Err(text) => part.body(text),
    }
}

/// Keeps the SMTP class, never the server's text (it may echo addresses).
fn classify(e: &lettre::transport::smtp::Error) -> AdapterError {
    let code = e.status().map(|c| c.to_string());
    if e.is_permanent() {
        let status = code.and_then(|c| c.parse().ok()).unwrap_or(550);
        AdapterError::Rejected {
            status,
            vendor_code: None,
        }
    } else if e.is_timeout() {
        AdapterError::Timeout
    } else if e.is_transient() {
        AdapterError::Unavailable(format!("smtp transient reply {}", code.unwrap_or_default()))
    } else {
        AdapterError::Unavailable("smtp connection failed".into())
    }
}
