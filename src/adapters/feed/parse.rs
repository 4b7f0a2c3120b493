//! Feed files into JSON records, so the shared mapping engine reads feeds and
//! APIs alike: delimited rows keyed by lower-cased header names, or the
//! record elements of an XML feed read as SOAP answers are.

use serde_json::{Map, Value};

use crate::adapters::AdapterError;
use crate::adapters::mapping::{FeedFormat, FeedSource, ValuePath, list_at};
use crate::adapters::soap::xml;

/// Elements an XML feed may hold: some 40 per unit, so room for a large
/// group's inventory, and still a bound on what a runaway document costs.
const XML_FEED_MAX_ELEMENTS: usize = 2_000_000;

/// Parses a feed body as `source` declares it (CSV or TSV sniffed when it
/// declares nothing).
pub fn parse_rows(body: &[u8], source: Option<&FeedSource>) -> Result<Vec<Value>, AdapterError> {
    match source {
        Some(FeedSource {
            format: FeedFormat::Xml,
            records: Some(records),
        }) => parse_xml(body, records),
        Some(FeedSource {
            format: FeedFormat::Xml,
            records: None,
        }) => Err(AdapterError::InvalidResponse(
            "xml feed mapping has no records path".into(),
        )),
        other => parse_delimited(body, other.map(|s| s.format)),
    }
}

/// The record elements of an XML feed. A document that is not XML (an HTML
/// error page is not well formed XML, or has no records) is refused, never
/// read as an empty inventory.
fn parse_xml(body: &[u8], records: &ValuePath) -> Result<Vec<Value>, AdapterError> {
    let tree = xml::to_json_bounded(body, XML_FEED_MAX_ELEMENTS)
        .map_err(|e| AdapterError::InvalidResponse(format!("feed is not readable XML: {e}")))?;
    if records.first(&tree).is_none() {
        return Err(AdapterError::InvalidResponse(
            "xml feed has nothing at the mapping's records path".into(),
        ));
    }
    Ok(list_at(records, &tree).into_iter().cloned().collect())
}

/// Parses a CSV or TSV body. Header names are trimmed and lower-cased; a UTF-8
/// BOM and invalid UTF-8 (Windows-1252 feeds) are tolerated.
fn parse_delimited(body: &[u8], format: Option<FeedFormat>) -> Result<Vec<Value>, AdapterError> {
    let text = String::from_utf8_lossy(body);
    let text = text.trim_start_matches('\u{feff}');
    let first_line = text.lines().next().unwrap_or_default();
    let format = format.unwrap_or(if first_line.contains('\t') {
        FeedFormat::Tsv
    } else {
        FeedFormat::Csv
    });
    let mut reader = csv::ReaderBuilder::new()
        .delimiter(match format {
            FeedFormat::Tsv => b'\t',
            FeedFormat::Csv | FeedFormat::Xml => b',',
        })
        .quoting(format == FeedFormat::Csv)
        .flexible(true)
        .trim(csv::Trim::All)
        .from_reader(text.as_bytes());
    let headers: Vec<String> = reader
        .headers()
        .map_err(|_| AdapterError::InvalidResponse("feed has no readable header row".into()))?
        .iter()
        .map(|h| h.trim().to_ascii_lowercase())
        .collect();
    if headers.len() < 2 {
        return Err(AdapterError::InvalidResponse(
            "feed header row has fewer than two columns".into(),
        ));
    }
    let mut rows = Vec::new();
    for record in reader.records() {
        let record = record
            .map_err(|_| AdapterError::InvalidResponse("feed row is not well formed".into()))?;
        if record.iter().all(str::is_empty) {
            continue;
        }
        let row: Map<String, Value> = headers
            .iter()
            .zip(record.iter())
            .map(|(h, v)| (h.clone(), Value::String(v.to_owned())))
            .collect();
        rows.push(Value::Object(row));
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_quoted_csv_and_tsv() {
        let csv =
            "\u{feff}VIN,Description\r\n1HGBH41JXMN109186,\"One owner, \"\"like new\"\"\"\r\n";
        let rows = parse_rows(csv.as_bytes(), None).unwrap_or_default();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0]["description"], "One owner, \"like new\"");
        let tsv = "vin\tprice\nX\t18995 USD\n";
        let rows = parse_rows(tsv.as_bytes(), None).unwrap_or_default();
        assert_eq!(rows[0]["price"], "18995 USD");
    }

    #[test]
    fn reads_xml_records_and_refuses_other_documents() {
        let source = FeedSource {
            format: FeedFormat::Xml,
            records: ValuePath::parse("/listings/listing").ok(),
        };
        let doc =
            b"<listings><listing><vin>A</vin></listing><listing><vin>B</vin></listing></listings>";
        let rows = parse_rows(doc, Some(&source)).unwrap_or_default();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[1]["vin"], "B");
        let one = b"<listings><listing><vin>A</vin></listing></listings>";
        assert_eq!(
            parse_rows(one, Some(&source)).map(|r| r.len()).ok(),
            Some(1)
        );
        assert!(parse_rows(b"<html><body>Error</body></html>", Some(&source)).is_err());
        assert!(parse_rows(b"<listings><listing>", Some(&source)).is_err());
        assert!(parse_rows(b"vin,price\nA,1\n", Some(&source)).is_err());
    }

    #[test]
    fn refuses_garbage() {
        assert!(parse_rows(b"<html>oops</html>", None).is_err());
        assert!(parse_rows(b"", None).is_err());
    }
}
