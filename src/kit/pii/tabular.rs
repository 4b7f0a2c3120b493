//! CSV and TSV bodies: the columns whose header names customer data faked,
//! every other field searched as free text.

use super::fake::Faker;
use super::keys::classify;

/// The table with its fields faked, or the csv reader's error.
pub fn scrub(
    faker: &Faker,
    body: &[u8],
    delimiter: u8,
    ancestors: &[String],
) -> Result<Vec<u8>, csv::Error> {
    let mut reader = csv::ReaderBuilder::new()
        .delimiter(delimiter)
        .flexible(true)
        .from_reader(body);
    let headers = reader.headers()?.clone();
    let classes: Vec<_> = headers.iter().map(|h| classify(h, ancestors)).collect();
    let mut writer = csv::WriterBuilder::new()
        .delimiter(delimiter)
        .from_writer(Vec::new());
    writer.write_record(&headers)?;
    for record in reader.records() {
        let record = record?;
        let fields: Vec<String> = record
            .iter()
            .enumerate()
            .map(|(i, field)| match classes.get(i).copied().flatten() {
                Some(class) => faker.value(class, field),
                None => faker.text(field),
            })
            .collect();
        writer.write_record(&fields)?;
    }
    writer
        .into_inner()
        .map_err(|e| csv::Error::from(e.into_error()))
}
