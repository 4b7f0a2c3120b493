//! Distances always carry their unit; filters compare in one unit.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Unit of a distance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DistanceUnit {
    Mi,
    Km,
}

// An odometer reading or a mileage bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Mileage {
    pub value: u64,
    pub unit: DistanceUnit,
}

impl Mileage {
    /// The reading in whole miles, rounded to nearest, for comparisons across units.
    pub fn in_miles(&self) -> u64 {
        match self.unit {
            DistanceUnit::Mi => self.value,
            // 1 km = 0.621371 mi; integer arithmetic keeps this exact and portable.
            DistanceUnit::Km => (self.value * 621_371 + 500_000) / 1_000_000,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn converts_kilometres_to_miles() {
        assert_eq!(
            Mileage {
                value: 100_000,
                unit: DistanceUnit::Km
            }
            .in_miles(),
            62_137
        );
        assert_eq!(
            Mileage {
                value: 5,
                unit: DistanceUnit::Mi
            }
            .in_miles(),
            5
        );
    }
}
