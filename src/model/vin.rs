//! VIN checks per 49 CFR 565.15: length, alphabet and the position-9 check digit.
//!
//! The check digit is mandatory for vehicles built for North America since model
//! year 1981. Vehicles built for other markets often carry a non-check character
//! in position 9, so a mismatch there is tolerated when the WMI is not North
//! American (first character outside `1`-`5`).

use std::fmt;

const WEIGHTS: [u32; 17] = [8, 7, 6, 5, 4, 3, 2, 10, 0, 9, 8, 7, 6, 5, 4, 3, 2];

/// Why a VIN was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VinProblem {
    Length(usize),
    Character { position: usize, found: char },
    CheckDigit { expected: char, found: char },
}

impl fmt::Display for VinProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Length(n) => write!(f, "a VIN has 17 characters, this one has {n}"),
            Self::Character { position, found } => {
                write!(
                    f,
                    "character {found:?} at position {position} is not allowed in a VIN (I, O and Q never are)"
                )
            }
            Self::CheckDigit { expected, found } => {
                write!(
                    f,
                    "check digit (position 9) is {found:?} but the VIN's characters give {expected:?}"
                )
            }
        }
    }
}

/// Trims and upper-cases a VIN as typed by a person or sent by an upstream.
pub fn normalize(vin: &str) -> String {
    vin.trim().to_ascii_uppercase()
}

/// Checks a normalized VIN.
pub fn check(vin: &str) -> Result<(), VinProblem> {
    let bytes = vin.as_bytes();
    if bytes.len() != 17 || !vin.is_ascii() {
        return Err(VinProblem::Length(vin.chars().count()));
    }
    let mut sum = 0;
    for (index, &b) in bytes.iter().enumerate() {
        let c = char::from(b);
        let value = transliterate(c).ok_or(VinProblem::Character {
            position: index + 1,
            found: c,
        })?;
        sum += value * WEIGHTS[index];
    }
    let expected = match sum % 11 {
        10 => 'X',
        r => char::from_digit(r, 10).unwrap_or('?'),
    };
    let found = char::from(bytes[8]);
    if found != expected && is_north_american(vin) {
        return Err(VinProblem::CheckDigit { expected, found });
    }
    Ok(())
}

/// North-American WMIs start with 1-5; only those must carry a valid check digit.
pub fn is_north_american(vin: &str) -> bool {
    matches!(vin.as_bytes().first(), Some(b'1'..=b'5'))
}

fn transliterate(c: char) -> Option<u32> {
    let value = match c {
        '0'..='9' => c.to_digit(10)?,
        'A' | 'J' => 1,
        'B' | 'K' | 'S' => 2,
        'C' | 'L' | 'T' => 3,
        'D' | 'M' | 'U' => 4,
        'E' | 'N' | 'V' => 5,
        'F' | 'W' => 6,
        'G' | 'P' | 'X' => 7,
        'H' | 'Y' => 8,
        'R' | 'Z' => 9,
        _ => return None,
    };
    Some(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_valid_vins() {
        for vin in [
            "1M8GDM9AXKP042788",
            "1G4AH59H45G118341",
            "JH2RC3605MM101581",
            "1FAPP64R7LH123456",
            "2G4WF52L6S1472882",
            "3N1CP5BV8LL519113",
            "1HGBH41JXMN109186",
            "5J8YE1H45RL800260",
        ] {
            assert_eq!(check(vin), Ok(()), "{vin}");
        }
    }

    #[test]
    fn refuses_bad_check_digits_length_and_letters() {
        assert_eq!(
            check("1HD1KRM12PB600001"),
            Err(VinProblem::CheckDigit {
                expected: '5',
                found: '2'
            })
        );
        assert_eq!(
            check("5YJ3E1EA7KF317000"),
            Err(VinProblem::CheckDigit {
                expected: '2',
                found: '7'
            })
        );
        assert_eq!(check("1M8GDM9AXKP04278"), Err(VinProblem::Length(16)));
        assert_eq!(
            check("1M8GDM9AXKP04278O"),
            Err(VinProblem::Character {
                position: 17,
                found: 'O'
            })
        );
    }

    #[test]
    fn tolerates_non_north_american_check_character() {
        assert_eq!(check("WVWZZZ1JZXW000001"), Ok(()));
    }
}
