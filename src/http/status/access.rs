//! Who may see the status page: the holder of `[status] operator_token`,
//! signed in through the page's form (a cookie) or sending it as a bearer
//! token. No agent token or OAuth token opens it. Forms post only from the
//! page itself: same origin, and a token tied to the sign-in.

use std::time::Duration;

use axum::http::{HeaderMap, Method, header};
use hmac::{Hmac, Mac};
use secrecy::{ExposeSecret, SecretString};
use sha2::Sha256;
use subtle::ConstantTimeEq;

/// The cookie that carries a sign-in.
pub const COOKIE: &str = "dms_bridge_status";

/// The operator's credential and the page's place.
pub struct OperatorKey {
    token: SecretString,
    pub path: String,
    pub session: Duration,
}

impl std::fmt::Debug for OperatorKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OperatorKey")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

/// Why a request was not let in (logged; the page says only "sign in").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    NoCredential,
    WrongCredential,
    ExpiredSignIn,
}

impl Refusal {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::NoCredential => "no operator credential",
            Self::WrongCredential => "a credential that is not the operator's",
            Self::ExpiredSignIn => "an expired or altered sign-in",
        }
    }
}

impl OperatorKey {
    pub fn new(token: SecretString, path: String, session: Duration) -> Self {
        Self {
            token,
            path,
            session,
        }
    }

    /// Whether `presented` is the operator's credential (constant time).
    pub fn is_operator(&self, presented: &str) -> bool {
        bool::from(
            presented
                .as_bytes()
                .ct_eq(self.token.expose_secret().as_bytes()),
        )
    }

    fn mac(&self, purpose: &str, value: &str) -> String {
        // HMAC takes a key of any length; this cannot fail.
        let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(self.token.expose_secret().as_bytes())
        else {
            return String::new();
        };
        mac.update(purpose.as_bytes());
        mac.update(b"\n");
        mac.update(value.as_bytes());
        hex::encode(mac.finalize().into_bytes())
    }

    /// A sign-in that lasts `session` from `now` (seconds since the epoch):
    /// stateless, so any replica with the same config accepts it, and a new
    /// operator token ends every sign-in made with the old one.
    pub fn sign_in(&self, now: i64) -> String {
        let until = now.saturating_add(i64::try_from(self.session.as_secs()).unwrap_or(i64::MAX));
        format!("{until}.{}", self.mac("sign-in", &until.to_string()))
    }

    /// Whether the cookie's sign-in is the operator's and still runs at `now`.
    pub fn check_sign_in(&self, cookie: &str, now: i64) -> Result<(), Refusal> {
        let Some((until, mac)) = cookie.split_once('.') else {
            return Err(Refusal::ExpiredSignIn);
        };
        let expected = self.mac("sign-in", until);
        let genuine = bool::from(mac.as_bytes().ct_eq(expected.as_bytes()));
        match until.parse::<i64>() {
            Ok(until) if genuine && until > now => Ok(()),
            _ => Err(Refusal::ExpiredSignIn),
        }
    }

    /// The token a form of this sign-in carries (a forged form has none).
    pub fn form_token(&self, sign_in: &str) -> String {
        self.mac("form", sign_in)
    }

    pub fn check_form_token(&self, sign_in: &str, given: &str) -> bool {
        bool::from(given.as_bytes().ct_eq(self.form_token(sign_in).as_bytes()))
    }
}

/// How the request proves itself: a sign-in cookie or a bearer token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Presented {
    SignIn(String),
    Bearer(String),
    Nothing,
}

pub fn presented(headers: &HeaderMap) -> Presented {
    if let Some(bearer) = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
    {
        return Presented::Bearer(bearer.trim().to_owned());
    }
    let cookie = headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|c| c.trim().split_once('='))
        .find(|(name, _)| *name == COOKIE)
        .map(|(_, value)| value.to_owned());
    cookie.map_or(Presented::Nothing, Presented::SignIn)
}

/// The page is the bridge's own: a request another site's page makes (its
/// `Origin` names another host, or the browser says it is cross-site) is
/// refused, reads and form posts alike. A top-level visit from a link or
/// the address bar sends neither and gets in.
pub fn foreign_origin(method: &Method, headers: &HeaderMap) -> Option<String> {
    let host = headers.get(header::HOST).and_then(|v| v.to_str().ok())?;
    if let Some(origin) = headers.get(header::ORIGIN) {
        let origin = origin.to_str().unwrap_or("(unreadable)");
        let origin_host = origin.split_once("://").map(|(_, rest)| rest);
        if origin_host != Some(host) {
            return Some(format!("Origin {origin}"));
        }
    }
    let site = headers
        .get("sec-fetch-site")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("none");
    let unsafe_method = method != Method::GET && method != Method::HEAD;
    let allowed = ["same-origin", "none"];
    (unsafe_method && !allowed.contains(&site)).then(|| format!("Sec-Fetch-Site {site}"))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn key(token: &str) -> OperatorKey {
        OperatorKey::new(token.into(), "/status".into(), Duration::from_secs(60))
    }

    #[test]
    fn a_sign_in_holds_for_its_session_and_only_under_its_key() {
        let k = key("operator-secret");
        let cookie = k.sign_in(1_000);
        assert_eq!(k.check_sign_in(&cookie, 1_059), Ok(()));
        assert_eq!(k.check_sign_in(&cookie, 1_060), Err(Refusal::ExpiredSignIn));
        assert!(key("rotated").check_sign_in(&cookie, 1_001).is_err());
        let (until, mac) = cookie.split_once('.').unwrap();
        let longer = format!("{}.{mac}", until.parse::<i64>().unwrap() + 3_600);
        assert!(
            k.check_sign_in(&longer, 1_001).is_err(),
            "an altered expiry"
        );
        assert!(k.check_form_token(&cookie, &k.form_token(&cookie)));
        assert!(!k.check_form_token(&cookie, &k.form_token(&longer)));
    }

    #[test]
    fn only_the_pages_own_origin_may_post() {
        let mut h = HeaderMap::new();
        h.insert(header::HOST, "127.0.0.1:8080".parse().unwrap());
        assert_eq!(foreign_origin(&Method::POST, &h), None);
        h.insert(header::ORIGIN, "http://127.0.0.1:8080".parse().unwrap());
        h.insert("sec-fetch-site", "same-origin".parse().unwrap());
        assert_eq!(foreign_origin(&Method::POST, &h), None);
        h.insert(header::ORIGIN, "https://evil.example".parse().unwrap());
        assert!(foreign_origin(&Method::GET, &h).is_some());
        h.remove(header::ORIGIN);
        h.insert("sec-fetch-site", "cross-site".parse().unwrap());
        assert!(foreign_origin(&Method::POST, &h).is_some());
        assert_eq!(
            foreign_origin(&Method::GET, &h),
            None,
            "a link from elsewhere"
        );
    }
}
