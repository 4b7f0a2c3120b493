//! Header, path and query templates: literal text with `{vars.NAME}`,
//! `{secrets.NAME}`, `{uuid}` (fresh per request), `{dealership_id}` and, in
//! operations that take them, request parameters such as `{vin}`. Checked when
//! the adapter is built so a typo fails at start, not on the first call.

use std::collections::BTreeMap;

use reqwest::header::HeaderName;
use secrecy::{ExposeSecret, SecretString};

use super::BuildError;

#[derive(Debug, Clone)]
enum Piece {
    Text(String),
    Var(String),
    Secret(String),
    Uuid,
    DealershipId,
    /// A request parameter (`{vin}`, `{mileage_mi}`…); tools validate their values
    /// (letters, digits, hyphens), so they are safe in a path.
    Param(String),
}

/// A compiled template.
#[derive(Debug, Clone)]
pub struct Template {
    pieces: Vec<Piece>,
}

/// Values a template may use.
pub struct TemplateContext<'a> {
    pub vars: &'a BTreeMap<String, String>,
    pub secrets: &'a BTreeMap<String, SecretString>,
    pub dealership_id: &'a str,
    /// Request parameters: their names when compiling, their values when rendering.
    pub params: &'a BTreeMap<String, String>,
}

/// No request parameters.
pub static NO_PARAMS: BTreeMap<String, String> = BTreeMap::new();

/// The request parameters `names`, declared (with empty values) so that
/// templates naming them compile.
pub fn param_names(names: &[&str]) -> BTreeMap<String, String> {
    names
        .iter()
        .map(|p| ((*p).to_owned(), String::new()))
        .collect()
}

impl Template {
    pub fn compile(text: &str, ctx: &TemplateContext<'_>) -> Result<Self, String> {
        let mut pieces = Vec::new();
        let mut rest = text;
        while let Some(start) = rest.find('{') {
            if start > 0 {
                pieces.push(Piece::Text(rest[..start].to_owned()));
            }
            let end = rest[start..]
                .find('}')
                .ok_or_else(|| format!("unclosed {{ in {text:?}"))?
                + start;
            let name = &rest[start + 1..end];
            pieces.push(match name.split_once('.') {
                Some(("vars", var)) if ctx.vars.contains_key(var) => Piece::Var(var.to_owned()),
                Some(("secrets", s)) if ctx.secrets.contains_key(s) => Piece::Secret(s.to_owned()),
                None if name == "uuid" => Piece::Uuid,
                None if name == "dealership_id" => Piece::DealershipId,
                // Dotted parameters too (`{lookup.vehicle_id}`): names the operation defines.
                _ if ctx.params.contains_key(name) => Piece::Param(name.to_owned()),
                _ => {
                    return Err(format!(
                        "{{{name}}} is not defined (give it under vars or secrets)"
                    ));
                }
            });
            rest = &rest[end + 1..];
        }
        if !rest.is_empty() {
            pieces.push(Piece::Text(rest.to_owned()));
        }
        Ok(Self { pieces })
    }

    /// Whether the template is plain text, the same on every render.
    pub fn is_constant(&self) -> bool {
        self.pieces.iter().all(|p| matches!(p, Piece::Text(_)))
    }

    /// Renders the template. The result may contain a secret: never log it.
    pub fn render(&self, ctx: &TemplateContext<'_>) -> String {
        let mut out = String::new();
        for piece in &self.pieces {
            match piece {
                Piece::Text(t) => out.push_str(t),
                Piece::Var(v) => out.push_str(ctx.vars.get(v).map_or("", String::as_str)),
                Piece::Secret(s) => {
                    out.push_str(ctx.secrets.get(s).map_or("", |s| s.expose_secret()))
                }
                Piece::Uuid => out.push_str(&uuid::Uuid::new_v4().to_string()),
                Piece::DealershipId => out.push_str(ctx.dealership_id),
                Piece::Param(p) => out.push_str(ctx.params.get(p).map_or("", String::as_str)),
            }
        }
        out
    }
}

/// Compiles a profile's `[headers]`; each problem goes to `errors` with its key.
pub fn compile_headers(
    headers: &BTreeMap<String, String>,
    ctx: &TemplateContext<'_>,
    errors: &mut Vec<BuildError>,
) -> Vec<(HeaderName, Template)> {
    headers
        .iter()
        .filter_map(|(name, value)| {
            let header = HeaderName::try_from(name.as_str())
                .map_err(|_| {
                    errors.push(BuildError::in_profile(format!(
                        "headers.{name}: not a header name"
                    )))
                })
                .ok()?;
            let template = Template::compile(value, ctx)
                .map_err(|e| errors.push(BuildError::in_profile(format!("headers.{name}: {e}"))))
                .ok()?;
            Some((header, template))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_vars_secrets_and_fresh_uuids() {
        let vars = BTreeMap::from([("sub".to_owned(), "S-1".to_owned())]);
        let secrets = BTreeMap::from([("key".to_owned(), SecretString::from("k"))]);
        let ctx = TemplateContext {
            vars: &vars,
            secrets: &secrets,
            dealership_id: "d1",
            params: &NO_PARAMS,
        };
        let t = Template::compile("{vars.sub}/{secrets.key}/{dealership_id}", &ctx)
            .map(|t| t.render(&ctx));
        assert_eq!(t, Ok("S-1/k/d1".to_owned()));
        let u = Template::compile("{uuid}", &ctx);
        let (a, b) = match u {
            Ok(u) => (u.render(&ctx), u.render(&ctx)),
            Err(e) => panic!("{e}"),
        };
        assert_ne!(a, b);
        assert_eq!(a.len(), 36);
    }

    #[test]
    fn refuses_unknown_placeholders() {
        let empty = BTreeMap::new();
        let secrets = BTreeMap::new();
        let ctx = TemplateContext {
            vars: &empty,
            secrets: &secrets,
            dealership_id: "d",
            params: &NO_PARAMS,
        };
        assert!(Template::compile("{vars.missing}", &ctx).is_err());
        assert!(Template::compile("{oops", &ctx).is_err());
        assert!(Template::compile("/vin/{vin}", &ctx).is_err());
    }

    #[test]
    fn renders_request_parameters_where_the_operation_declares_them() {
        let empty = BTreeMap::new();
        let secrets = BTreeMap::new();
        let names = BTreeMap::from([("vin".to_owned(), String::new())]);
        let compile = TemplateContext {
            vars: &empty,
            secrets: &secrets,
            dealership_id: "d",
            params: &names,
        };
        let t = Template::compile("/vin/{vin}", &compile).unwrap();
        let values = BTreeMap::from([("vin".to_owned(), "1HGCM82633A004352".to_owned())]);
        let render = TemplateContext {
            params: &values,
            ..compile
        };
        assert_eq!(t.render(&render), "/vin/1HGCM82633A004352");
    }
}
