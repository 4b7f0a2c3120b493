//! Delimited feed files into JSON rows keyed by lower-cased header names, so the
//! shared mapping engine reads feeds and APIs alike.

use serde_json::{Map, Value};

use crate::adapters::AdapterError;
use crate::adapters::mapping::FeedFormat;

/// Parses a CSV or TSV body. Header names are trimmed and lower-cased; a UTF-8
/// BOM and invalid UTF-8 (Windows-1252 feeds) are tolerated.
pub fn parse_rows(body: &[u8], format: Option<FeedFormat>) -> Result<Vec<Value>, AdapterError> {
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
            FeedFormat::Csv => b',',
            FeedFormat::Tsv => b'\t',
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
    fn refuses_garbage() {
        assert!(parse_rows(b"<html>oops</html>", None).is_err());
        assert!(parse_rows(b"", None).is_err());
    }
}
