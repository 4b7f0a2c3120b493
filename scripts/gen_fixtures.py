#!/usr/bin/env python3
"""Generate the recorded-style upstream fixtures used by dms-bridge.

The files under ``wiremock-fixtures/`` imitate what the upstream systems send
(a CDK Fortellis "Merchandisable Vehicles v2" REST API, a HomeNet/ICC-style
CSV inventory feed and a Google vehicle-listings-style TSV feed). They feed
both the test suite and the mock upstreams of the built-in demo.

Everything here is fictional: dealerships, addresses, VIN serials, people.
The generator uses only the Python 3.11 standard library and is fully
deterministic: fixed seeds, fixed reference dates, no clock, no environment.
Running it twice yields byte-identical files.

Usage (from the repository root)::

    python3 scripts/gen_fixtures.py            # writes wiremock-fixtures/
    python3 scripts/gen_fixtures.py --out DIR  # writes somewhere else
    python3 scripts/gen_fixtures.py --quiet    # no summary on stdout
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import io
import json
import random
import zlib
from dataclasses import dataclass, field
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO_ROOT / "wiremock-fixtures"

# Seeds: one per output so that editing one generator never reshuffles another.
SEED_CDK = 20261120
SEED_FEED = 20261117
SEED_FEED_NEXT = 20261118
SEED_GOOGLE = 20261031

LOT_START = dt.date(2026, 6, 1)
LOT_END = dt.date(2026, 11, 15)
MODIFIED_START = dt.datetime(2026, 11, 18, 0, 0, 0, tzinfo=dt.timezone.utc)
MODIFIED_SPAN_SECONDS = 4 * 86400  # 2026-11-18T00:00:00Z .. 2026-11-21T23:59:59Z
CURRENT_MODEL_YEAR = 2026

# --------------------------------------------------------------------------
# VIN rules
# --------------------------------------------------------------------------

VIN_CHARS = "0123456789ABCDEFGHJKLMNPRSTUVWXYZ"  # no I, O, Q
VIN_LETTERS = "ABCDEFGHJKLMNPRSTUVWXYZ"
TRANSLITERATION = {
    **{str(d): d for d in range(10)},
    "A": 1, "B": 2, "C": 3, "D": 4, "E": 5, "F": 6, "G": 7, "H": 8,
    "J": 1, "K": 2, "L": 3, "M": 4, "N": 5, "P": 7, "R": 9,
    "S": 2, "T": 3, "U": 4, "V": 5, "W": 6, "X": 7, "Y": 8, "Z": 9,
}
WEIGHTS = (8, 7, 6, 5, 4, 3, 2, 10, 0, 9, 8, 7, 6, 5, 4, 3, 2)
# 2010..2039: letters A..Y without I O Q U Z, then digits 1..9.
YEAR_CODES = dict(zip(range(2010, 2040), "ABCDEFGHJKLMNPRSTVWXY123456789"))

KNOWN_VIN_VECTORS = {
    "1M8GDM9AXKP042788": True,
    "1G4AH59H45G118341": True,
    "5J8YE1H45RL800260": True,
    "3N1CP5BV8LL519113": True,
    "1HGBH41JXMN109186": True,
    "1HD1KRM12PB600001": False,
    "5YJ3E1EA7KF317000": False,
}


def vin_check_char(vin: str) -> str:
    """Return the ISO 3779 / 49 CFR 565 check character for a 17-char VIN."""
    total = sum(TRANSLITERATION[c] * w for c, w in zip(vin, WEIGHTS))
    rem = total % 11
    return "X" if rem == 10 else str(rem)


def vin_is_valid(vin: str) -> bool:
    """Structural + check-digit validity (what any VIN decoder would test)."""
    return (
        len(vin) == 17
        and all(c in VIN_CHARS for c in vin)
        and vin[9] not in "UZ0"
        and vin[8] == vin_check_char(vin)
    )


def assert_generated_vin(vin: str, year: int, wmis: tuple[str, ...]) -> None:
    """Stricter rules every VIN this script emits must satisfy."""
    assert vin_is_valid(vin), vin
    assert vin[:3] in wmis, (vin, wmis)
    assert vin[6] in VIN_LETTERS, f"{vin}: position 7 must be a letter for 2010+"
    assert vin[9] == YEAR_CODES[year], (vin, year)
    assert vin[10] in VIN_CHARS, vin
    assert vin[11:].isdigit(), vin


def self_test_vins() -> None:
    """Check the verifier against known vectors before trusting it."""
    for vin, expected in KNOWN_VIN_VECTORS.items():
        assert vin_is_valid(vin) is expected, (vin, expected)


# --------------------------------------------------------------------------
# Vehicle catalog (make / model / trim combinations that really exist)
# --------------------------------------------------------------------------

BODY_DOORS = {
    "SUV": 4, "Sedan": 4, "Pickup": 4, "Coupe": 2, "Hatchback": 4,
    "Wagon": 4, "Van": 4, "Convertible": 2,
}


@dataclass(frozen=True)
class Spec:
    make: str
    model: str
    trim: str
    body: str
    fuel: str
    trans_desc: str
    drive: str
    engine: str
    base_msrp: int  # approximate current-model-year MSRP in USD
    y_min: int
    y_max: int
    interior: str  # cloth | synthetic | leather
    wmis: tuple[str, ...]
    doors: int

    @property
    def trans_type(self) -> str:
        if "CVT" in self.trans_desc:
            return "CVT"
        if "Manual" in self.trans_desc:
            return "Manual"
        return "Automatic"

    @property
    def key(self) -> str:
        return f"{self.make}|{self.model}|{self.trim}|{self.engine}"


def _spec(make, model, trim, body, fuel, trans, drive, engine, msrp, years,
          interior, wmis, doors=None) -> Spec:
    return Spec(make, model, trim, body, fuel, trans, drive, engine, msrp,
                years[0], years[1], interior, tuple(wmis),
                doors if doors is not None else BODY_DOORS[body])


G, H, P, E, D = "Gasoline", "Hybrid", "Plug-In Hybrid", "Electric", "Diesel"
EV1 = "Single-Speed"

CATALOG: tuple[Spec, ...] = tuple(_spec(*row[:12], **(row[12] if len(row) > 12 else {})) for row in [
    # Honda
    ("Honda", "Civic", "LX", "Sedan", G, "CVT", "FWD", "2.0L I4", 24700, (2016, 2026), "cloth", ["2HG", "1HG"]),
    ("Honda", "Civic", "Sport", "Sedan", G, "CVT", "FWD", "2.0L I4", 27300, (2016, 2026), "cloth", ["2HG", "1HG"]),
    ("Honda", "Civic", "EX", "Sedan", G, "CVT", "FWD", "1.5L I4 Turbo", 29900, (2016, 2026), "cloth", ["2HG", "1HG"]),
    ("Honda", "Civic", "Sport", "Hatchback", G, "CVT", "FWD", "2.0L I4", 28500, (2017, 2026), "cloth", ["SHH", "19X"]),
    ("Honda", "Civic", "Si", "Sedan", G, "6-Speed Manual", "FWD", "1.5L I4 Turbo", 31500, (2017, 2026), "cloth", ["2HG"]),
    ("Honda", "Accord", "EX", "Sedan", G, "CVT", "FWD", "1.5L I4 Turbo", 31800, (2018, 2026), "cloth", ["1HG"]),
    ("Honda", "Accord", "Sport Hybrid", "Sedan", H, "e-CVT", "FWD", "2.0L I4 Hybrid", 34500, (2023, 2026), "synthetic", ["1HG"]),
    ("Honda", "CR-V", "EX", "SUV", G, "CVT", "AWD", "1.5L I4 Turbo", 34700, (2017, 2026), "cloth", ["7FA", "2HK", "5J6"]),
    ("Honda", "CR-V", "EX-L", "SUV", G, "CVT", "AWD", "1.5L I4 Turbo", 37400, (2017, 2026), "leather", ["7FA", "2HK", "5J6"]),
    ("Honda", "CR-V", "Sport Hybrid", "SUV", H, "e-CVT", "AWD", "2.0L I4 Hybrid", 36800, (2023, 2026), "cloth", ["7FA"]),
    ("Honda", "CR-V", "Sport Touring Hybrid", "SUV", H, "e-CVT", "AWD", "2.0L I4 Hybrid", 42500, (2023, 2026), "leather", ["7FA"]),
    ("Honda", "HR-V", "Sport", "SUV", G, "CVT", "AWD", "2.0L I4", 28500, (2023, 2026), "cloth", ["3CZ"]),
    ("Honda", "Pilot", "EX-L", "SUV", G, "9-Speed Automatic", "AWD", "3.5L V6", 44900, (2019, 2022), "leather", ["5FN"]),
    ("Honda", "Pilot", "EX-L", "SUV", G, "10-Speed Automatic", "AWD", "3.5L V6 DOHC", 46400, (2023, 2026), "leather", ["5FN"]),
    ("Honda", "Odyssey", "EX-L", "Van", G, "10-Speed Automatic", "FWD", "3.5L V6", 43800, (2018, 2026), "leather", ["5FN"]),
    # Acura
    ("Acura", "RDX", "Technology", "SUV", G, "10-Speed Automatic", "AWD", "2.0L I4 Turbo", 48900, (2019, 2026), "leather", ["5J8"]),
    ("Acura", "MDX", "Technology", "SUV", G, "10-Speed Automatic", "AWD", "3.5L V6", 57800, (2022, 2026), "leather", ["5J8"]),
    ("Acura", "Integra", "A-Spec", "Hatchback", G, "CVT", "FWD", "1.5L I4 Turbo", 36900, (2023, 2026), "synthetic", ["19U"]),
    ("Acura", "TLX", "A-Spec", "Sedan", G, "10-Speed Automatic", "FWD", "2.0L I4 Turbo", 47900, (2021, 2026), "leather", ["19U"]),
    # Toyota
    ("Toyota", "Corolla", "LE", "Sedan", G, "CVT", "FWD", "2.0L I4", 23500, (2020, 2026), "cloth", ["JTD", "5YF"]),
    ("Toyota", "Corolla", "SE", "Hatchback", G, "CVT", "FWD", "2.0L I4", 25500, (2019, 2026), "cloth", ["JTN"]),
    ("Toyota", "Corolla Cross", "LE", "SUV", G, "CVT", "AWD", "2.0L I4", 27500, (2022, 2026), "cloth", ["7MU"]),
    ("Toyota", "Camry", "LE", "Sedan", G, "8-Speed Automatic", "FWD", "2.5L I4", 27500, (2018, 2024), "cloth", ["4T1"]),
    ("Toyota", "Camry", "SE", "Sedan", H, "e-CVT", "FWD", "2.5L I4 Hybrid", 31500, (2025, 2026), "synthetic", ["4T1"]),
    ("Toyota", "Prius", "LE", "Hatchback", H, "e-CVT", "FWD", "2.0L I4 Hybrid", 29500, (2023, 2026), "cloth", ["JTD"]),
    ("Toyota", "RAV4", "XLE", "SUV", G, "8-Speed Automatic", "AWD", "2.5L I4", 32800, (2019, 2025), "cloth", ["2T3", "JTM"]),
    ("Toyota", "RAV4 Hybrid", "XLE", "SUV", H, "e-CVT", "AWD", "2.5L I4 Hybrid", 35500, (2019, 2025), "cloth", ["2T3", "JTM"]),
    ("Toyota", "RAV4", "XLE Premium", "SUV", H, "e-CVT", "AWD", "2.5L I4 Hybrid", 38500, (2026, 2026), "synthetic", ["2T3", "JTM"]),
    ("Toyota", "RAV4 Prime", "XSE", "SUV", P, "e-CVT", "AWD", "2.5L I4 Plug-In Hybrid", 45500, (2021, 2025), "synthetic", ["JTM"]),
    ("Toyota", "Highlander", "XLE", "SUV", G, "8-Speed Automatic", "AWD", "3.5L V6", 44500, (2017, 2022), "synthetic", ["5TD"]),
    ("Toyota", "Highlander", "XLE", "SUV", G, "8-Speed Automatic", "AWD", "2.4L I4 Turbo", 47500, (2023, 2026), "synthetic", ["5TD"]),
    ("Toyota", "Highlander Hybrid", "XLE", "SUV", H, "e-CVT", "AWD", "2.5L I4 Hybrid", 48500, (2020, 2026), "synthetic", ["5TD"]),
    ("Toyota", "Tacoma", "TRD Off-Road", "Pickup", G, "6-Speed Automatic", "4WD", "3.5L V6", 40000, (2016, 2023), "cloth", ["3TM", "5TF"]),
    ("Toyota", "Tacoma", "TRD Off-Road", "Pickup", G, "8-Speed Automatic", "4WD", "2.4L I4 Turbo", 45500, (2024, 2026), "cloth", ["3TY"]),
    ("Toyota", "Tundra", "SR5", "Pickup", G, "10-Speed Automatic", "4WD", "3.4L V6 Twin-Turbo", 52500, (2022, 2026), "cloth", ["5TF"]),
    ("Toyota", "4Runner", "SR5", "SUV", G, "5-Speed Automatic", "4WD", "4.0L V6", 41500, (2016, 2024), "cloth", ["JTE"]),
    ("Toyota", "4Runner", "TRD Off-Road", "SUV", G, "8-Speed Automatic", "4WD", "2.4L I4 Turbo", 50500, (2025, 2026), "synthetic", ["JTE"]),
    ("Toyota", "Sienna", "XLE", "Van", H, "e-CVT", "FWD", "2.5L I4 Hybrid", 45500, (2021, 2026), "synthetic", ["5TD"]),
    # Subaru
    ("Subaru", "Outback", "Premium", "Wagon", G, "CVT", "AWD", "2.5L H4", 31800, (2016, 2026), "cloth", ["4S4"]),
    ("Subaru", "Outback", "Onyx Edition XT", "Wagon", G, "CVT", "AWD", "2.4L H4 Turbo", 40500, (2021, 2026), "synthetic", ["4S4"]),
    ("Subaru", "Forester", "Premium", "SUV", G, "CVT", "AWD", "2.5L H4", 31500, (2016, 2026), "cloth", ["JF2"]),
    ("Subaru", "Forester", "Sport", "SUV", G, "CVT", "AWD", "2.5L H4", 34500, (2019, 2026), "cloth", ["JF2"]),
    ("Subaru", "Crosstrek", "Premium", "SUV", G, "CVT", "AWD", "2.0L H4", 25500, (2018, 2023), "cloth", ["JF2"]),
    ("Subaru", "Crosstrek", "Sport", "SUV", G, "CVT", "AWD", "2.5L H4", 30500, (2024, 2026), "cloth", ["4S4", "JF2"]),
    ("Subaru", "Ascent", "Limited", "SUV", G, "CVT", "AWD", "2.4L H4 Turbo", 45500, (2019, 2026), "leather", ["4S4"]),
    ("Subaru", "WRX", "Premium", "Sedan", G, "6-Speed Manual", "AWD", "2.4L H4 Turbo", 35500, (2022, 2026), "cloth", ["JF1"]),
    ("Subaru", "Impreza", "Sport", "Hatchback", G, "CVT", "AWD", "2.5L H4", 27500, (2024, 2026), "cloth", ["JF1"]),
    ("Subaru", "Legacy", "Limited", "Sedan", G, "CVT", "AWD", "2.5L H4", 33500, (2020, 2025), "leather", ["4S3"]),
    ("Subaru", "Solterra", "Premium", "SUV", E, EV1, "AWD", "Dual Motor Electric", 46500, (2023, 2026), "synthetic", ["JF2"]),
    # Kia
    ("Kia", "Forte", "GT-Line", "Sedan", G, "CVT", "FWD", "2.0L I4", 23500, (2019, 2024), "cloth", ["3KP"]),
    ("Kia", "K4", "EX", "Sedan", G, "CVT", "FWD", "2.0L I4", 24500, (2025, 2026), "synthetic", ["3KP"]),
    ("Kia", "K5", "GT-Line", "Sedan", G, "8-Speed Automatic", "FWD", "1.6L I4 Turbo", 29500, (2021, 2026), "synthetic", ["5XX"]),
    ("Kia", "Soul", "S", "Hatchback", G, "CVT", "FWD", "2.0L I4", 22500, (2020, 2025), "cloth", ["KND"]),
    ("Kia", "Sportage", "EX", "SUV", G, "8-Speed Automatic", "AWD", "2.5L I4", 32500, (2023, 2026), "synthetic", ["KND", "5XY"]),
    ("Kia", "Sportage Hybrid", "EX", "SUV", H, "6-Speed Automatic", "AWD", "1.6L I4 Turbo Hybrid", 35500, (2023, 2026), "synthetic", ["KND"]),
    ("Kia", "Sorento", "EX", "SUV", G, "8-Speed Dual-Clutch Automatic", "AWD", "2.5L I4 Turbo", 39500, (2021, 2026), "synthetic", ["5XY"]),
    ("Kia", "Telluride", "EX", "SUV", G, "8-Speed Automatic", "AWD", "3.8L V6", 45500, (2020, 2026), "synthetic", ["5XY"]),
    ("Kia", "EV6", "Wind", "SUV", E, EV1, "AWD", "Dual Motor Electric", 51500, (2022, 2026), "synthetic", ["KND"]),
    ("Kia", "Carnival", "EX", "Van", G, "8-Speed Automatic", "FWD", "3.5L V6", 41500, (2022, 2026), "cloth", ["KND"]),
    ("Kia", "Niro", "EX", "SUV", H, "6-Speed Dual-Clutch Automatic", "FWD", "1.6L I4 Hybrid", 31500, (2023, 2026), "synthetic", ["KND"]),
    # Hyundai
    ("Hyundai", "Elantra", "SEL", "Sedan", G, "CVT", "FWD", "2.0L I4", 24500, (2021, 2026), "cloth", ["5NP", "KMH"]),
    ("Hyundai", "Sonata", "SEL", "Sedan", G, "8-Speed Automatic", "FWD", "2.5L I4", 29500, (2020, 2026), "cloth", ["5NP", "KMH"]),
    ("Hyundai", "Kona", "SEL", "SUV", G, "CVT", "FWD", "2.0L I4", 27500, (2019, 2026), "cloth", ["KM8"]),
    ("Hyundai", "Tucson", "SEL", "SUV", G, "8-Speed Automatic", "AWD", "2.5L I4", 32500, (2022, 2026), "cloth", ["5NM", "KM8"]),
    ("Hyundai", "Tucson Hybrid", "SEL Convenience", "SUV", H, "6-Speed Automatic", "AWD", "1.6L I4 Turbo Hybrid", 35500, (2022, 2026), "synthetic", ["KM8"]),
    ("Hyundai", "Santa Fe", "SEL", "SUV", G, "8-Speed Automatic", "AWD", "2.5L I4", 37500, (2019, 2026), "synthetic", ["5NM"]),
    ("Hyundai", "Santa Cruz", "SEL", "Pickup", G, "8-Speed Automatic", "AWD", "2.5L I4", 33500, (2022, 2026), "cloth", ["5NT"]),
    ("Hyundai", "Palisade", "SEL", "SUV", G, "8-Speed Automatic", "AWD", "3.8L V6", 44500, (2020, 2025), "synthetic", ["KM8"]),
    ("Hyundai", "Ioniq 5", "SEL", "SUV", E, EV1, "AWD", "Dual Motor Electric", 50500, (2022, 2026), "synthetic", ["KM8"]),
    # Ford
    ("Ford", "F-150", "XLT", "Pickup", G, "10-Speed Automatic", "4WD", "2.7L V6 EcoBoost", 55500, (2018, 2026), "cloth", ["1FT"]),
    ("Ford", "F-150", "Lariat", "Pickup", G, "10-Speed Automatic", "4WD", "3.5L V6 EcoBoost", 66500, (2018, 2026), "leather", ["1FT"]),
    ("Ford", "F-150 Lightning", "XLT", "Pickup", E, EV1, "AWD", "Dual Motor Electric", 64500, (2022, 2026), "cloth", ["1FT"]),
    ("Ford", "Ranger", "XLT", "Pickup", G, "10-Speed Automatic", "4WD", "2.3L I4 EcoBoost", 38500, (2019, 2026), "cloth", ["1FT"]),
    ("Ford", "Maverick", "XLT", "Pickup", H, "CVT", "FWD", "2.5L I4 Hybrid", 29500, (2022, 2026), "cloth", ["3FT"]),
    ("Ford", "Escape", "SE", "SUV", G, "8-Speed Automatic", "AWD", "1.5L I3 EcoBoost", 31500, (2020, 2026), "cloth", ["1FM"]),
    ("Ford", "Explorer", "XLT", "SUV", G, "10-Speed Automatic", "4WD", "2.3L I4 EcoBoost", 42500, (2020, 2026), "cloth", ["1FM"]),
    ("Ford", "Bronco", "Big Bend", "SUV", G, "10-Speed Automatic", "4WD", "2.3L I4 EcoBoost", 43500, (2021, 2026), "cloth", ["1FM"]),
    ("Ford", "Bronco Sport", "Badlands", "SUV", G, "8-Speed Automatic", "4WD", "2.0L I4 EcoBoost", 40500, (2021, 2026), "cloth", ["3FM"]),
    ("Ford", "Mustang", "GT", "Coupe", G, "6-Speed Manual", "RWD", "5.0L V8", 46500, (2016, 2026), "cloth", ["1FA"]),
    ("Ford", "Mustang", "EcoBoost Premium", "Convertible", G, "10-Speed Automatic", "RWD", "2.3L I4 EcoBoost", 44500, (2018, 2026), "leather", ["1FA"]),
    ("Ford", "Mustang Mach-E", "Premium", "SUV", E, EV1, "AWD", "Dual Motor Electric", 50500, (2021, 2026), "synthetic", ["3FM"]),
    ("Ford", "Fusion", "SE", "Sedan", G, "6-Speed Automatic", "FWD", "1.5L I4 EcoBoost", 25500, (2016, 2020), "cloth", ["3FA"]),
    # Chevrolet
    ("Chevrolet", "Silverado 1500", "LT", "Pickup", G, "10-Speed Automatic", "4WD", "5.3L V8", 56500, (2019, 2026), "cloth", ["1GC", "3GC"]),
    ("Chevrolet", "Silverado 1500", "RST", "Pickup", G, "10-Speed Automatic", "4WD", "5.3L V8", 60500, (2019, 2026), "cloth", ["1GC", "3GC"]),
    ("Chevrolet", "Colorado", "Z71", "Pickup", G, "8-Speed Automatic", "4WD", "2.7L I4 Turbo", 43500, (2023, 2026), "cloth", ["1GC"]),
    ("Chevrolet", "Equinox", "LT", "SUV", G, "6-Speed Automatic", "AWD", "1.5L I4 Turbo", 31500, (2018, 2024), "cloth", ["3GN", "2GN"]),
    ("Chevrolet", "Equinox", "LT", "SUV", G, "8-Speed Automatic", "AWD", "1.5L I4 Turbo", 32500, (2025, 2026), "cloth", ["3GN"]),
    ("Chevrolet", "Equinox EV", "2LT", "SUV", E, EV1, "FWD", "Single Motor Electric", 35500, (2024, 2026), "synthetic", ["3GN"]),
    ("Chevrolet", "Trax", "LT", "SUV", G, "6-Speed Automatic", "FWD", "1.2L I3 Turbo", 24500, (2024, 2026), "cloth", ["KL7"]),
    ("Chevrolet", "Traverse", "LT", "SUV", G, "9-Speed Automatic", "AWD", "3.6L V6", 39500, (2018, 2023), "cloth", ["1GN"]),
    ("Chevrolet", "Traverse", "LT", "SUV", G, "8-Speed Automatic", "AWD", "2.5L I4 Turbo", 44500, (2024, 2026), "cloth", ["1GN"]),
    ("Chevrolet", "Tahoe", "LT", "SUV", G, "10-Speed Automatic", "4WD", "5.3L V8", 66500, (2021, 2026), "leather", ["1GN"]),
    ("Chevrolet", "Malibu", "LT", "Sedan", G, "CVT", "FWD", "1.5L I4 Turbo", 27500, (2019, 2025), "cloth", ["1G1"]),
    ("Chevrolet", "Bolt EV", "2LT", "Hatchback", E, EV1, "FWD", "Single Motor Electric", 34500, (2017, 2023), "leather", ["1G1"]),
    ("Chevrolet", "Camaro", "1LT", "Coupe", G, "8-Speed Automatic", "RWD", "2.0L I4 Turbo", 32500, (2016, 2024), "cloth", ["1G1"]),
    # Nissan
    ("Nissan", "Altima", "2.5 SV", "Sedan", G, "CVT", "FWD", "2.5L I4", 29500, (2019, 2026), "cloth", ["1N4"]),
    ("Nissan", "Sentra", "SV", "Sedan", G, "CVT", "FWD", "2.0L I4", 23500, (2020, 2026), "cloth", ["3N1"]),
    ("Nissan", "Versa", "SV", "Sedan", G, "CVT", "FWD", "1.6L I4", 20500, (2020, 2025), "cloth", ["3N1"]),
    ("Nissan", "Kicks", "SV", "SUV", G, "CVT", "FWD", "1.6L I4", 22500, (2018, 2024), "cloth", ["3N1"]),
    ("Nissan", "Rogue", "SV", "SUV", G, "CVT", "AWD", "2.5L I4", 28500, (2016, 2021), "cloth", ["5N1", "JN8"]),
    ("Nissan", "Rogue", "SV", "SUV", G, "CVT", "AWD", "1.5L I3 Turbo", 32500, (2022, 2026), "cloth", ["5N1", "JN8"]),
    ("Nissan", "Pathfinder", "SL", "SUV", G, "9-Speed Automatic", "4WD", "3.5L V6", 45500, (2022, 2026), "leather", ["5N1"]),
    ("Nissan", "Frontier", "PRO-4X", "Pickup", G, "9-Speed Automatic", "4WD", "3.8L V6", 42500, (2022, 2026), "synthetic", ["1N6"]),
    ("Nissan", "Leaf", "SV Plus", "Hatchback", E, EV1, "FWD", "Single Motor Electric", 37500, (2019, 2024), "cloth", ["1N4"]),
    # Jeep
    ("Jeep", "Wrangler", "Rubicon", "SUV", G, "8-Speed Automatic", "4WD", "3.6L V6", 55500, (2018, 2026), "cloth", ["1C4"]),
    ("Jeep", "Wrangler", "Sport S", "SUV", G, "6-Speed Manual", "4WD", "3.6L V6", 38500, (2018, 2026), "cloth", ["1C4"], {"doors": 2}),
    ("Jeep", "Wrangler", "Rubicon 4xe", "SUV", P, "8-Speed Automatic", "4WD", "2.0L I4 Turbo Plug-In Hybrid", 60500, (2021, 2026), "synthetic", ["1C4"]),
    ("Jeep", "Grand Cherokee", "Limited", "SUV", G, "8-Speed Automatic", "4WD", "3.6L V6", 47500, (2016, 2026), "leather", ["1C4"]),
    ("Jeep", "Cherokee", "Latitude Lux", "SUV", G, "9-Speed Automatic", "4WD", "2.4L I4", 33500, (2019, 2023), "cloth", ["1C4"]),
    ("Jeep", "Compass", "Latitude", "SUV", G, "8-Speed Automatic", "4WD", "2.0L I4 Turbo", 31500, (2022, 2026), "cloth", ["3C4"]),
    ("Jeep", "Gladiator", "Sport S", "Pickup", G, "8-Speed Automatic", "4WD", "3.6L V6", 43500, (2020, 2026), "cloth", ["1C6"]),
    # Ram
    ("Ram", "1500", "Big Horn", "Pickup", G, "8-Speed Automatic", "4WD", "5.7L V8 HEMI", 52500, (2019, 2024), "cloth", ["1C6"]),
    ("Ram", "1500", "Big Horn", "Pickup", G, "8-Speed Automatic", "4WD", "3.0L I6 Twin-Turbo", 54500, (2025, 2026), "cloth", ["1C6"]),
    ("Ram", "1500", "Laramie", "Pickup", G, "8-Speed Automatic", "4WD", "5.7L V8 HEMI", 63500, (2019, 2024), "leather", ["1C6"]),
    ("Ram", "2500", "Laramie", "Pickup", D, "6-Speed Automatic", "4WD", "6.7L I6 Turbo Diesel", 72500, (2019, 2026), "leather", ["3C6"]),
    # Tesla
    ("Tesla", "Model 3", "Long Range", "Sedan", E, EV1, "AWD", "Dual Motor Electric", 47500, (2018, 2026), "synthetic", ["5YJ"]),
    ("Tesla", "Model 3", "Rear-Wheel Drive", "Sedan", E, EV1, "RWD", "Single Motor Electric", 42500, (2022, 2026), "synthetic", ["5YJ"]),
    ("Tesla", "Model Y", "Long Range", "SUV", E, EV1, "AWD", "Dual Motor Electric", 50500, (2020, 2026), "synthetic", ["5YJ", "7SA"]),
    # Mazda
    ("Mazda", "CX-5", "2.5 S Preferred", "SUV", G, "6-Speed Automatic", "AWD", "2.5L I4", 32500, (2019, 2025), "synthetic", ["JM3"]),
    ("Mazda", "CX-30", "2.5 S Select", "SUV", G, "6-Speed Automatic", "AWD", "2.5L I4", 27500, (2020, 2026), "synthetic", ["3MV"]),
    ("Mazda", "CX-50", "2.5 S Premium", "SUV", G, "6-Speed Automatic", "AWD", "2.5L I4", 36500, (2023, 2026), "leather", ["7MM"]),
    ("Mazda", "CX-90", "3.3 Turbo Preferred Plus", "SUV", G, "8-Speed Automatic", "AWD", "3.3L I6 Turbo", 47500, (2024, 2026), "leather", ["JM3"]),
    ("Mazda", "Mazda3", "2.5 S Select", "Sedan", G, "6-Speed Automatic", "FWD", "2.5L I4", 25500, (2019, 2026), "synthetic", ["3MZ", "JM1"]),
    ("Mazda", "Mazda3", "2.5 S Preferred", "Hatchback", G, "6-Speed Automatic", "FWD", "2.5L I4", 28500, (2019, 2026), "synthetic", ["3MZ", "JM1"]),
    ("Mazda", "MX-5 Miata", "Club", "Convertible", G, "6-Speed Manual", "RWD", "2.0L I4", 35500, (2019, 2026), "cloth", ["JM1"]),
    # Volkswagen
    ("Volkswagen", "Jetta", "SE", "Sedan", G, "8-Speed Automatic", "FWD", "1.5L I4 Turbo", 25500, (2019, 2026), "synthetic", ["3VW"]),
    ("Volkswagen", "Golf GTI", "S", "Hatchback", G, "6-Speed Manual", "FWD", "2.0L I4 Turbo", 30500, (2018, 2024), "cloth", ["3VW", "WVW"]),
    ("Volkswagen", "Golf GTI", "S", "Hatchback", G, "7-Speed Dual-Clutch Automatic", "FWD", "2.0L I4 Turbo", 33500, (2025, 2026), "cloth", ["WVW"]),
    ("Volkswagen", "Taos", "SE", "SUV", G, "7-Speed Dual-Clutch Automatic", "AWD", "1.5L I4 Turbo", 29500, (2022, 2026), "cloth", ["3VV"]),
    ("Volkswagen", "Tiguan", "SE", "SUV", G, "8-Speed Automatic", "AWD", "2.0L I4 Turbo", 33500, (2018, 2026), "synthetic", ["3VV"]),
    ("Volkswagen", "Atlas", "SE with Technology", "SUV", G, "8-Speed Automatic", "AWD", "2.0L I4 Turbo", 44500, (2018, 2026), "synthetic", ["1V2"]),
    ("Volkswagen", "ID.4", "Pro S", "SUV", E, EV1, "AWD", "Dual Motor Electric", 50500, (2021, 2026), "synthetic", ["1V2", "WVG"]),
    # BMW
    ("BMW", "X3", "xDrive30i", "SUV", G, "8-Speed Automatic", "AWD", "2.0L I4 Turbo", 51500, (2018, 2026), "synthetic", ["5UX"]),
    ("BMW", "X5", "xDrive40i", "SUV", G, "8-Speed Automatic", "AWD", "3.0L I6 Turbo", 68500, (2019, 2026), "leather", ["5UX"]),
    ("BMW", "3 Series", "330i xDrive", "Sedan", G, "8-Speed Automatic", "AWD", "2.0L I4 Turbo", 49500, (2019, 2026), "synthetic", ["WBA", "3MW"]),
    ("BMW", "i4", "eDrive40", "Sedan", E, EV1, "RWD", "Single Motor Electric", 58500, (2022, 2026), "synthetic", ["WBA"]),
    # GMC
    ("GMC", "Sierra 1500", "SLE", "Pickup", G, "10-Speed Automatic", "4WD", "5.3L V8", 58500, (2019, 2026), "cloth", ["3GT", "1GT"]),
    ("GMC", "Sierra 2500HD", "Denali", "Pickup", D, "10-Speed Automatic", "4WD", "6.6L V8 Turbo Diesel", 85500, (2020, 2026), "leather", ["1GT"]),
    ("GMC", "Terrain", "SLE", "SUV", G, "9-Speed Automatic", "AWD", "1.5L I4 Turbo", 33500, (2018, 2024), "cloth", ["3GK"]),
    ("GMC", "Acadia", "SLT", "SUV", G, "9-Speed Automatic", "AWD", "3.6L V6", 44500, (2017, 2023), "leather", ["1GK"]),
    ("GMC", "Yukon", "SLT", "SUV", G, "10-Speed Automatic", "4WD", "5.3L V8", 72500, (2021, 2026), "leather", ["1GK"]),
    # Lexus
    ("Lexus", "RX 350", "Base", "SUV", G, "8-Speed Automatic", "AWD", "3.5L V6", 46500, (2016, 2022), "synthetic", ["2T2", "JTJ"]),
    ("Lexus", "RX 350", "Premium", "SUV", G, "8-Speed Automatic", "AWD", "2.4L I4 Turbo", 53500, (2023, 2026), "synthetic", ["2T2"]),
    ("Lexus", "NX 350h", "Premium", "SUV", H, "e-CVT", "AWD", "2.5L I4 Hybrid", 49500, (2022, 2026), "synthetic", ["2T2", "JTJ"]),
    ("Lexus", "IS 300", "Base", "Sedan", G, "8-Speed Automatic", "RWD", "2.0L I4 Turbo", 42500, (2017, 2026), "synthetic", ["JTH"]),
    ("Lexus", "ES 350", "Luxury", "Sedan", G, "8-Speed Automatic", "FWD", "3.5L V6", 45500, (2019, 2025), "leather", ["58A", "JTH"]),
])

ALL_MAKES = sorted({s.make for s in CATALOG})

EXTERIOR_COLORS: dict[str, list[tuple[str, str]]] = {
    "Honda": [("Black", "Crystal Black Pearl"), ("White", "Platinum White Pearl"), ("Gray", "Meteorite Gray Metallic"),
              ("Silver", "Lunar Silver Metallic"), ("Blue", "Still Night Pearl"), ("Red", "Radiant Red Metallic"),
              ("Gray", "Sonic Gray Pearl")],
    "Acura": [("White", "Platinum White Pearl"), ("Black", "Majestic Black Pearl"), ("Gray", "Liquid Carbon Metallic"),
              ("Silver", "Lunar Silver Metallic"), ("Red", "Performance Red Pearl"), ("Blue", "Apex Blue Pearl")],
    "Toyota": [("White", "Wind Chill Pearl"), ("Black", "Midnight Black Metallic"), ("Silver", "Celestial Silver Metallic"),
               ("Gray", "Magnetic Gray Metallic"), ("Red", "Supersonic Red"), ("Blue", "Blueprint"),
               ("Green", "Army Green"), ("White", "Ice Cap")],
    "Subaru": [("Green", "Autumn Green Metallic"), ("White", "Crystal White Pearl"), ("Black", "Crystal Black Silica"),
               ("Gray", "Magnetite Gray Metallic"), ("Blue", "Abyss Blue Pearl"), ("Silver", "Ice Silver Metallic"),
               ("Blue", "Horizon Blue Pearl")],
    "Kia": [("White", "Snow White Pearl"), ("Black", "Ebony Black"), ("Gray", "Gravity Gray"), ("Red", "Runway Red"),
            ("Blue", "Gravity Blue"), ("White", "Glacial White Pearl"), ("Silver", "Steel Gray")],
    "Hyundai": [("White", "Serenity White Pearl"), ("Black", "Phantom Black"), ("Gray", "Amazon Gray"),
                ("Silver", "Shimmering Silver"), ("Blue", "Intense Blue"), ("Gray", "Cyber Gray Metallic")],
    "Ford": [("White", "Oxford White"), ("Black", "Agate Black Metallic"), ("Blue", "Atlas Blue Metallic"),
             ("Gray", "Carbonized Gray Metallic"), ("Red", "Rapid Red Metallic Tinted Clearcoat"),
             ("Silver", "Iconic Silver Metallic"), ("Blue", "Antimatter Blue Metallic")],
    "Chevrolet": [("White", "Summit White"), ("Black", "Black"), ("Gray", "Sterling Gray Metallic"),
                  ("Red", "Radiant Red Tintcoat"), ("Blue", "Northsky Blue Metallic"), ("Silver", "Silver Ice Metallic")],
    "Nissan": [("White", "Glacier White"), ("Gray", "Gun Metallic"), ("Black", "Super Black"),
               ("Red", "Scarlet Ember Tintcoat"), ("Blue", "Deep Blue Pearl"), ("Silver", "Brilliant Silver Metallic")],
    "Jeep": [("Black", "Black Clear Coat"), ("White", "Bright White Clear Coat"), ("Gray", "Granite Crystal Metallic"),
             ("Red", "Firecracker Red Clear Coat"), ("Green", "Sarge Green Clear Coat"), ("Blue", "Hydro Blue Pearl Coat"),
             ("Silver", "Billet Silver Metallic")],
    "Ram": [("White", "Bright White Clear Coat"), ("Black", "Diamond Black Crystal Pearl"),
            ("Gray", "Granite Crystal Metallic"), ("Red", "Flame Red Clear Coat"), ("Blue", "Patriot Blue Pearl"),
            ("Silver", "Billet Silver Metallic")],
    "Tesla": [("White", "Pearl White Multi-Coat"), ("Black", "Solid Black"), ("Gray", "Midnight Silver Metallic"),
              ("Blue", "Deep Blue Metallic"), ("Red", "Ultra Red"), ("Gray", "Stealth Grey")],
    "Mazda": [("Red", "Soul Red Crystal Metallic"), ("Gray", "Machine Gray Metallic"), ("White", "Snowflake White Pearl Mica"),
              ("Black", "Jet Black Mica"), ("Blue", "Deep Crystal Blue Mica"), ("Gray", "Polymetal Gray Metallic")],
    "Volkswagen": [("White", "Pure White"), ("Black", "Deep Black Pearl"), ("Gray", "Platinum Gray Metallic"),
                   ("Silver", "Pyrite Silver Metallic"), ("Red", "Kings Red Metallic"), ("Gray", "Pure Gray")],
    "BMW": [("Black", "Black Sapphire Metallic"), ("White", "Alpine White"), ("White", "Mineral White Metallic"),
            ("Blue", "Phytonic Blue Metallic"), ("Gray", "Skyscraper Grey Metallic"), ("Blue", "Portimao Blue Metallic")],
    "GMC": [("White", "Summit White"), ("Black", "Onyx Black"), ("Gray", "Titanium Rush Metallic"),
            ("Red", "Cayenne Red Tintcoat"), ("Blue", "Downpour Metallic"), ("White", "White Frost Tricoat")],
    "Lexus": [("White", "Eminent White Pearl"), ("Black", "Caviar"), ("Gray", "Nebula Gray Pearl"),
              ("Red", "Matador Red Mica"), ("Blue", "Nightfall Mica"), ("Silver", "Atomic Silver")],
}

INTERIOR_COLORS: dict[str, list[tuple[str, str]]] = {
    "cloth": [("Black", "Black Cloth"), ("Gray", "Gray Cloth"), ("Black", "Black Sport Cloth"), ("Beige", "Beige Cloth")],
    "synthetic": [("Black", "Black Synthetic Leather"), ("Gray", "Gray Synthetic Leather"),
                  ("Brown", "Cognac Synthetic Leather"), ("White", "Light Gray Synthetic Leather")],
    "leather": [("Black", "Black Leather"), ("Gray", "Gray Leather"), ("Beige", "Ivory Leather"),
                ("Brown", "Saddle Brown Leather")],
}

assert set(EXTERIOR_COLORS) == set(ALL_MAKES), set(ALL_MAKES) ^ set(EXTERIOR_COLORS)


# --------------------------------------------------------------------------
# Vehicle model (format-independent) and generation helpers
# --------------------------------------------------------------------------

@dataclass
class Vehicle:
    spec: Spec
    year: int
    condition: str  # new | used | certified
    vin: str
    miles: int
    msrp: int | None
    advertised: int
    selling: float | None
    exterior: tuple[str, str] | None
    interior: tuple[str, str]
    lot_date: dt.date
    stock: str = ""
    status: str = "IN_STOCK"
    deleted: bool = False
    odometer_unit: str = "MILES"
    odometer_value: int = 0
    trim_missing: bool = False
    photos: int = 3
    extra: dict = field(default_factory=dict)

    @property
    def label(self) -> str:
        trim = "" if self.trim_missing else f" {self.spec.trim}"
        return f"{self.year} {self.spec.make} {self.spec.model}{trim}"


class VinFactory:
    """Mints unique, valid VINs; remembers every VIN across all files."""

    def __init__(self) -> None:
        self.seen: set[str] = set()

    @staticmethod
    def _vds_and_plant(spec: Spec) -> tuple[str, str]:
        # Stable per model line: same make/model/trim/engine -> same VDS + plant.
        r = random.Random(zlib.crc32(spec.key.encode("utf-8")))
        vds = [r.choice(VIN_LETTERS), r.choice(VIN_CHARS), r.choice(VIN_CHARS),
               r.choice(VIN_LETTERS), r.choice(VIN_CHARS)]  # 3rd index = position 7
        return "".join(vds), r.choice(VIN_CHARS)

    def mint(self, rng: random.Random, spec: Spec, year: int) -> str:
        wmi = rng.choice(spec.wmis)
        vds, plant = self._vds_and_plant(spec)
        while True:
            serial = f"{rng.randint(0, 999999):06d}"
            draft = f"{wmi}{vds}0{YEAR_CODES[year]}{plant}{serial}"
            vin = draft[:8] + vin_check_char(draft) + draft[9:]
            if vin not in self.seen:
                break
        assert_generated_vin(vin, year, spec.wmis)
        self.seen.add(vin)
        return vin


def random_date(rng: random.Random, start: dt.date = LOT_START, end: dt.date = LOT_END) -> dt.date:
    return start + dt.timedelta(days=rng.randint(0, (end - start).days))


def weighted_choice(rng: random.Random, weights: dict):
    keys = list(weights)
    return rng.choices(keys, weights=[weights[k] for k in keys], k=1)[0]


# Used-car age distribution (model years 2016..2025).
USED_YEAR_WEIGHTS = {2025: 6, 2024: 9, 2023: 10, 2022: 9, 2021: 8, 2020: 7, 2019: 6, 2018: 5, 2017: 3, 2016: 2}
CPO_YEAR_WEIGHTS = {2025: 5, 2024: 9, 2023: 9, 2022: 7, 2021: 5, 2020: 3}
NEW_YEAR_WEIGHTS = {2026: 8, 2025: 2}


def pick_spec_and_year(rng: random.Random, make: str, year_weights: dict[int, int]) -> tuple[Spec, int]:
    """Pick a catalog entry for ``make`` and a model year it was built in."""
    candidates = [s for s in CATALOG if s.make == make and any(s.y_min <= y <= s.y_max for y in year_weights)]
    assert candidates, (make, year_weights)
    spec = rng.choice(candidates)
    years = {y: w for y, w in year_weights.items() if spec.y_min <= y <= spec.y_max}
    return spec, weighted_choice(rng, years)


def round_to(value: float, step: int) -> int:
    return int(round(value / step)) * step


def dealer_price(value: float) -> int:
    """Round to a dealer-style price ending in 995 or 495 (e.g. 17495, 24995)."""
    return round_to(value, 500) - 5


def used_value(spec: Spec, year: int, miles: int, certified: bool) -> float:
    """Rough retail value: depreciation by age, adjusted for mileage."""
    age = max(1, CURRENT_MODEL_YEAR - year)
    if spec.fuel == E:
        factor = 0.82 * 0.91 ** (age - 1)
    else:
        factor = 0.90 * 0.95 ** (age - 1)
    expected = 12000 * age
    mileage_adj = 1 - 0.10 * (miles - expected) / max(expected, 12000)
    factor *= min(1.08, max(0.85, mileage_adj))
    if certified:
        factor *= 1.04
    return spec.base_msrp * factor


def used_miles(rng: random.Random, year: int, certified: bool) -> int:
    age = max(1, CURRENT_MODEL_YEAR - year)
    miles = int(12000 * age * rng.uniform(0.65, 1.3))
    return min(75000 if certified else 120000, max(8000, miles)) + rng.randint(0, 999)


def make_vehicle(rng: random.Random, vins: VinFactory, make: str, condition: str, new_miles=(3, 60)) -> Vehicle:
    """Build one format-independent vehicle with consistent data and prices."""
    weights = {"new": NEW_YEAR_WEIGHTS, "used": USED_YEAR_WEIGHTS, "certified": CPO_YEAR_WEIGHTS}[condition]
    spec, year = pick_spec_and_year(rng, make, weights)
    if condition == "new":
        miles = rng.randint(*new_miles)
        options = rng.choice([0, 0, 495, 995, 1295, 1850, 2400, 3150])
        msrp = round_to(spec.base_msrp * (0.985 if year < CURRENT_MODEL_YEAR else 1.0) + options, 5)
        discount = rng.choice([0.0, 0.01, 0.02, 0.03, 0.045])
        advertised = dealer_price(msrp * (1 - discount)) if discount else msrp
        selling: float = advertised - rng.choice([0, 0, 0, 250, 500, 750, 1000])
    else:
        miles = used_miles(rng, year, condition == "certified")
        msrp = None
        advertised = dealer_price(used_value(spec, year, miles, condition == "certified"))
        selling = advertised - rng.choice([0, 0, 0, 0, 250, 500])
    if rng.random() < 0.3:
        selling += rng.choice([0.5, 0.25, 0.75])
    return Vehicle(
        spec=spec, year=year, condition=condition, vin=vins.mint(rng, spec, year),
        miles=miles, msrp=msrp, advertised=advertised, selling=selling,
        exterior=rng.choice(EXTERIOR_COLORS[make]), interior=rng.choice(INTERIOR_COLORS[spec.interior]),
        lot_date=random_date(rng), odometer_value=miles, photos=rng.randint(2, 4),
    )


def pick(rng: random.Random, pool: list[Vehicle], n: int, pred) -> list[Vehicle]:
    """Pick ``n`` distinct vehicles satisfying ``pred`` (deterministic)."""
    eligible = [v for v in pool if pred(v)]
    assert len(eligible) >= n, (n, len(eligible))
    return rng.sample(eligible, n)


def json_number(value: float) -> int | float:
    return int(value) if float(value).is_integer() else round(float(value), 2)


# --------------------------------------------------------------------------
# File 1: CDK Fortellis Merchandisable Vehicles v2
# --------------------------------------------------------------------------

CDK_FRANCHISES = {"Honda": 6, "Acura": 2, "Ford": 5, "Chevrolet": 5, "GMC": 2, "Hyundai": 4, "Nissan": 3,
                  "Jeep": 3, "Ram": 2}
USED_MAKE_WEIGHTS = {m: 2 for m in ALL_MAKES} | {"Honda": 4, "Toyota": 4, "Ford": 4, "Chevrolet": 4, "Nissan": 3}


def build_cdk(vins: VinFactory) -> list[Vehicle]:
    rng = random.Random(SEED_CDK)
    plan = ["new"] * 30 + ["used"] * 30 + ["certified"] * 12
    fleet: list[Vehicle] = []
    for condition in plan:
        weights = USED_MAKE_WEIGHTS if condition == "used" else CDK_FRANCHISES
        fleet.append(make_vehicle(rng, vins, weighted_choice(rng, weights), condition))

    # Stock numbers: unique, prefix C, assigned in random order, list sorted by stock.
    rng.shuffle(fleet)
    for v, n in zip(fleet, sorted(rng.sample(range(24001, 26999), len(fleet)))):
        v.stock = f"C{n}"
    fleet.sort(key=lambda v: v.stock)

    free = lambda v: not v.extra and v.status == "IN_STOCK" and not v.deleted  # noqa: E731
    for v in pick(rng, fleet, 5, lambda v: free(v) and v.condition == "new"):
        v.status, v.extra["transit"] = "IN_TRANSIT", True
        v.miles = v.odometer_value = rng.randint(0, 10)
        v.lot_date = random_date(rng, dt.date(2026, 11, 1), LOT_END)
        v.photos = 2
    for v in pick(rng, fleet, 2, lambda v: free(v) and v.condition != "certified"):
        v.status, v.extra["pending"] = "PENDING_SALE", True
    for v in pick(rng, fleet, 2, lambda v: free(v) and v.condition != "new"):
        v.status, v.extra["sold"] = "SOLD", True
    for v in pick(rng, fleet, 3, lambda v: free(v) and v.condition != "new"):
        v.deleted, v.extra["deleted"] = True, True
    for v in pick(rng, fleet, 2, lambda v: free(v) and v.condition == "used"):
        v.selling, v.extra["no_selling"] = None, True
    # Canadian import: pick a used unit whose WMI says "built in Canada" (2xx).
    (km,) = pick(rng, fleet, 1, lambda v: free(v) and v.condition == "used" and v.vin[0] == "2")
    km.odometer_unit, km.odometer_value, km.extra["km"] = "KILOMETERS", round(km.miles * 1.609344), True
    (nt,) = pick(rng, fleet, 1, lambda v: free(v) and v.condition == "used")
    nt.trim_missing, nt.extra["no_trim"] = True, True
    (nc,) = pick(rng, fleet, 1, lambda v: free(v) and v.condition == "used")
    nc.exterior, nc.extra["no_color"] = None, True
    return fleet


def cdk_description(rng: random.Random, v: Vehicle) -> str:
    color = f" in {v.exterior[1]}" if v.exterior else ""
    if v.extra.get("km"):
        return (f"Canadian-market {v.label}{color}, odometer shown in kilometers, "
                f"fully inspected and ready for delivery.")
    if v.status == "IN_TRANSIT":
        return f"Factory order {v.label}{color} is in transit; reserve yours before it arrives."
    if v.condition == "new":
        return rng.choice([
            f"Brand-new {v.label}{color} with the {v.spec.engine} and {v.spec.drive}.",
            f"New {v.label}{color}, {v.spec.trans_desc}, ready for a test drive today.",
            f"All-new {v.label}{color} now on our lot with full factory warranty.",
        ])
    if v.condition == "certified":
        return rng.choice([
            f"Certified pre-owned {v.label}{color}, multi-point inspected with extended warranty.",
            f"Certified {v.label}{color} with {v.miles:,} miles and a clean vehicle history report.",
        ])
    return rng.choice([
        f"Pre-owned {v.label}{color} with {v.miles:,} miles, one owner and a clean history report.",
        f"Local trade-in {v.label}{color}, recently serviced with new tires.",
        f"Well-kept {v.label}{color}; non-smoker, two keys, service records available.",
    ])


def render_cdk(fleet: list[Vehicle]) -> str:
    rng = random.Random(SEED_CDK + 1)

    # Exactly 1/4 of all price amounts become strings ("57890.00").
    slots = [(i, kind) for i, v in enumerate(fleet)
             for kind, value in (("MSRP", v.msrp), ("ADVERTISED", v.advertised), ("SELLING", v.selling))
             if value is not None]
    string_prices = set(rng.sample(slots, round(len(slots) / 4)))
    # Exactly 1/5 of the vehicles get a string odometer with a thousands separator ("12,345").
    odo_eligible = [i for i, v in enumerate(fleet) if v.odometer_unit == "MILES" and v.odometer_value >= 1000]
    string_odometers = set(rng.sample(odo_eligible, round(len(fleet) / 5)))

    results = []
    for i, v in enumerate(fleet):
        prices = []
        for kind, value in (("MSRP", v.msrp), ("ADVERTISED", v.advertised), ("SELLING", v.selling)):
            if value is not None:
                text = f"{value:.2f}" if (i, kind) in string_prices else json_number(value)
                prices.append({"type": kind, "amount": text})
        odo = f"{v.odometer_value:,}" if i in string_odometers else v.odometer_value
        modified = MODIFIED_START + dt.timedelta(seconds=rng.randrange(MODIFIED_SPAN_SECONDS))
        item = {
            "vin": v.vin,
            "stockNumber": v.stock,
            "year": v.year,
            "make": v.spec.make,
            "model": v.spec.model,
            "trim": None if v.trim_missing else v.spec.trim,
            "category": v.condition,
            "bodyStyleDescription": v.spec.body,
            "fuelType": v.spec.fuel,
            "transmission": {"type": v.spec.trans_type, "description": v.spec.trans_desc},
            "driveTrain": v.spec.drive,
            "engine": {"description": v.spec.engine},
            "doors": v.spec.doors,
        }
        if v.exterior is not None:
            item["color"] = {
                "exterior": {"baseColor": v.exterior[0], "name": v.exterior[1]},
                "interior": {"baseColor": v.interior[0], "name": v.interior[1]},
            }
        item |= {
            "odometer": {"value": odo, "unit": v.odometer_unit},
            "financials": {"prices": prices},
            "lotDate": v.lot_date.isoformat(),
            "modifiedDateTime": modified.strftime("%Y-%m-%dT%H:%M:%S.000Z"),
            "deleted": v.deleted,
            "marketable": not (v.deleted or v.status == "SOLD"),
            "vehicleStatus": {"inventoryStatus": v.status},
            "photos": [{"url": f"https://images.demo-cdk.example/{v.vin}/{i}.jpg"} for i in range(1, v.photos + 1)],
            "vdpUrl": f"https://www.demo-cdk.example/inventory/{v.vin}",
            "description": cdk_description(rng, v),
        }
        results.append(item)
    n = len(results)
    doc = {"summary": {"count": n, "totalCount": n, "limit": n, "offset": 0}, "results": results}
    return json.dumps(doc, indent=2) + "\n"


# --------------------------------------------------------------------------
# Files 2 and 3: HomeNet/ICC-style CSV feed (and its next refresh)
# --------------------------------------------------------------------------

FEED_HEADER = [
    "DealerID", "Type", "Stock", "VIN", "Year", "Make", "Model", "Trim", "Body", "Doors", "ExteriorColor",
    "InteriorColor", "EngineDescription", "Transmission", "Drivetrain", "FuelType", "Miles", "SellingPrice", "MSRP",
    "InternetPrice", "Certified", "DateInStock", "Status", "ImageList", "VDP", "Description",
]
FEED_FRANCHISES = {"Toyota": 7, "Subaru": 5, "Kia": 4}
FEED_STATUS = {"IN_STOCK": "In Stock", "IN_TRANSIT": "In Transit", "PENDING_SALE": "Pending", "SOLD": "Sold"}

USED_BLURBS = [
    'One owner, clean history, "like new" interior.',
    "Local trade, new tires, service records available.",
    "Non-smoker, garage kept, two keys, ready to go.",
    'Priced to move, "no haggle" pricing, financing available.',
    "Backup camera, Bluetooth, heated seats, clean title.",
    "Recent oil change, fresh detail, 150-point inspection passed.",
    "Moonroof, alloy wheels \u2014 a great commuter, test drive today.",
]
CPO_BLURBS = [
    "Certified pre-owned, one owner, extended powertrain warranty included.",
    'Certified, clean history, "showroom" condition, roadside assistance.',
    "Certified pre-owned, inspected, reconditioned, and warranty backed.",
]


def feed_price(value: float, style: str) -> str:
    if style == "dollar":
        return f"${value:,.0f}"
    if style == "decimal":
        return f"{value:.2f}"
    return f"{value:.0f}"


def build_feed(vins: VinFactory) -> list[Vehicle]:
    rng = random.Random(SEED_FEED)
    used_weights = {m: 1 for m in ALL_MAKES} | {"Toyota": 6, "Subaru": 4, "Kia": 3}
    fleet: list[Vehicle] = []
    for condition in ["new"] * 30 + ["used"] * 28 + ["certified"] * 10:
        weights = used_weights if condition == "used" else FEED_FRANCHISES
        v = make_vehicle(rng, vins, weighted_choice(rng, weights), condition)
        v.selling = float(int(v.selling))  # this feed carries whole-dollar prices
        fleet.append(v)
    rng.shuffle(fleet)
    for v, n in zip(fleet, sorted(rng.sample(range(10001, 39999), len(fleet)))):
        v.stock = f"F{n}"
    fleet.sort(key=lambda v: v.stock)

    free = lambda v: v.status == "IN_STOCK" and not v.extra  # noqa: E731
    for v in pick(rng, fleet, 4, lambda v: free(v) and v.condition == "new"):
        v.status, v.extra["transit"] = "IN_TRANSIT", True
        v.miles = v.odometer_value = rng.randint(0, 10)
        v.photos = 1
    for v in pick(rng, fleet, 2, lambda v: free(v)):
        v.status, v.extra["pending"] = "PENDING_SALE", True
    for v in pick(rng, fleet, 3, lambda v: free(v) and v.condition != "new"):
        v.status, v.extra["sold"] = "SOLD", True
    for v in pick(rng, fleet, 2, lambda v: free(v)):
        v.selling, v.extra["call_for_price"] = None, True

    for v in fleet:
        v.extra["miles_style"] = rng.choice(["comma", "plain"])
        v.extra["price_style"] = rng.choice(["dollar", "decimal", "plain"])
        v.extra["internet"] = (rng.choice([0, 500, 1000]) if rng.random() < 0.4 else None)
        v.extra["photos"] = v.photos if v.status == "IN_TRANSIT" else rng.randint(1, 4)
        v.extra["blurb"] = feed_description(rng, v)
    return fleet


def feed_description(rng: random.Random, v: Vehicle) -> str:
    color = v.exterior[1] if v.exterior else "color TBD"
    if v.status == "IN_TRANSIT":
        return f"In transit, arriving soon, reserve your {v.year} {v.spec.model} today."
    if v.condition == "new":
        return f"Brand new {v.year} {v.spec.model} {v.spec.trim}, {color}, {v.spec.engine}, {v.spec.drive}."
    if v.condition == "certified":
        return rng.choice(CPO_BLURBS)
    return rng.choice(USED_BLURBS)


def feed_row(v: Vehicle) -> list[str]:
    miles = f"{v.miles:,}" if v.extra["miles_style"] == "comma" else str(v.miles)
    selling = "" if v.selling is None else feed_price(v.selling, v.extra["price_style"])
    internet = "" if v.selling is None or v.extra["internet"] is None else str(int(v.selling) + v.extra["internet"])
    images = "|".join(f"https://images.demo-feed.example/{v.vin}/{i}.jpg" for i in range(1, v.extra["photos"] + 1))
    return [
        "DEMO-FEED-01", "New" if v.condition == "new" else "Used", v.stock, v.vin, str(v.year), v.spec.make,
        v.spec.model, v.spec.trim, v.spec.body, str(v.spec.doors), v.exterior[1], v.interior[1], v.spec.engine,
        v.spec.trans_desc, v.spec.drive, v.spec.fuel, miles, selling, "" if v.msrp is None else str(v.msrp),
        internet, "Yes" if v.condition == "certified" else "No", v.lot_date.strftime("%m/%d/%Y"),
        FEED_STATUS[v.status], images, f"https://www.demo-feed.example/vehicle/{v.vin}", v.extra["blurb"],
    ]


def render_csv(rows: list[list[str]]) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\r\n", quoting=csv.QUOTE_MINIMAL)
    writer.writerow(FEED_HEADER)
    for row in rows:
        assert len(row) == len(FEED_HEADER)
        writer.writerow(row)
    return buf.getvalue()


@dataclass
class FeedRefresh:
    removed: list[Vehicle]
    added: Vehicle
    changed: Vehicle
    old_price: str
    new_price: str


def build_feed_next(vins: VinFactory, fleet: list[Vehicle]) -> tuple[list[list[str]], FeedRefresh]:
    """Same feed one refresh later: 3 in-stock units sold, 1 arrival, 1 price drop."""
    rng = random.Random(SEED_FEED_NEXT)
    plain_in_stock = lambda v: v.status == "IN_STOCK" and not v.extra.get("call_for_price")  # noqa: E731
    removed = pick(rng, fleet, 3, plain_in_stock)
    (changed,) = pick(rng, fleet, 1, lambda v: plain_in_stock(v) and v not in removed)
    old_price = feed_row(changed)[FEED_HEADER.index("SellingPrice")]
    changed_next = Vehicle(**{**changed.__dict__, "extra": dict(changed.extra)})
    changed_next.selling = changed.selling - 1000
    new_price = feed_row(changed_next)[FEED_HEADER.index("SellingPrice")]

    added = make_vehicle(rng, vins, "Toyota", "new")
    added.selling = float(int(added.selling))
    added.stock = f"F{int(fleet[-1].stock[1:]) + 7}"
    added.lot_date = dt.date(2026, 11, 17)
    added.extra.update(miles_style="plain", price_style="dollar", internet=None, photos=3)
    added.extra["blurb"] = feed_description(rng, added)

    rows = []
    for v in fleet:
        if v in removed:
            continue
        rows.append(feed_row(changed_next if v is changed else v))
    rows.append(feed_row(added))
    return rows, FeedRefresh(removed, added, changed, old_price, new_price)


# --------------------------------------------------------------------------
# File 4: Google vehicle listings-style TSV
# --------------------------------------------------------------------------

GOOGLE_HEADER = [
    "vin", "id", "store_code", "dealership_name", "dealership_address", "price", "vehicle_msrp", "condition",
    "certified_pre-owned", "mileage", "make", "model", "year", "trim", "color", "body_style", "image_link",
    "additional_image_link", "link", "date_in_stock",
]
GOOGLE_STORE = ("DEMO-VLA", "Vista Lane Auto (Demo)", "2400 Vista Lane, Fairview Springs, OR 97000, US")
GOOGLE_BODY = {"SUV": "suv", "Sedan": "sedan", "Pickup": "truck", "Coupe": "coupe", "Hatchback": "hatchback",
               "Wagon": "wagon", "Van": "minivan", "Convertible": "convertible"}


def build_google(vins: VinFactory) -> list[Vehicle]:
    rng = random.Random(SEED_GOOGLE)
    franchise = {"Mazda": 3, "Volkswagen": 2}
    used_weights = {m: 1 for m in ALL_MAKES} | franchise
    fleet = []
    for condition in ["new"] * 5 + ["used"] * 5 + ["certified"] * 2:
        weights = used_weights if condition == "used" else franchise
        v = make_vehicle(rng, vins, weighted_choice(rng, weights), condition)
        v.selling = float(int(v.selling))
        fleet.append(v)
    rng.shuffle(fleet)
    for v, n in zip(fleet, sorted(rng.sample(range(5001, 9999), len(fleet)))):
        v.stock = f"VLA{n}"
    fleet.sort(key=lambda v: v.stock)
    for i, v in enumerate(fleet):
        v.extra["price_style"] = "comma" if i % 3 == 1 else "plain"
    return fleet


def google_price(value: float, style: str) -> str:
    return f"{value:,.2f} USD" if style == "comma" else f"{value:.0f} USD"


def render_google(fleet: list[Vehicle]) -> str:
    lines = ["\t".join(GOOGLE_HEADER)]
    for v in fleet:
        images = [f"https://images.demo-vla.example/{v.vin}/{i}.jpg" for i in range(1, v.photos + 1)]
        row = [
            v.vin, v.stock, GOOGLE_STORE[0], GOOGLE_STORE[1], GOOGLE_STORE[2],
            google_price(v.selling, v.extra["price_style"]),
            "" if v.msrp is None else f"{v.msrp} USD",
            "new" if v.condition == "new" else "used",
            "yes" if v.condition == "certified" else "no",
            f"{v.miles} miles", v.spec.make, v.spec.model, str(v.year), v.spec.trim, v.exterior[1],
            GOOGLE_BODY[v.spec.body], images[0], ",".join(images[1:]),
            f"https://www.demo-vla.example/vehicle/{v.vin}", v.lot_date.isoformat(),
        ]
        assert len(row) == len(GOOGLE_HEADER) and not any("\t" in c or "\n" in c for c in row)
        lines.append("\t".join(row))
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------
# Files 5 and 6: token + Fortellis-style error bodies
# --------------------------------------------------------------------------

TOKEN = {"token_type": "Bearer", "expires_in": 3600, "access_token": "demo-access-token", "scope": "anonymous"}
ERRORS = {
    "token-expired.json": {"code": "TOKEN-EXPIRED", "message": "The access token has expired."},
    "quota-exceeded.json": {"code": "QUOTA-EXCEEDED", "message": "Quota exceeded for subscription."},
    "missing-subscription-id.json": {"code": "MISSING-SUBSCRIPTION-ID",
                                     "message": "Subscription-Id header is required."},
    "limit-too-large.json": {"code": "INVALID-PARAMETER", "message": "limit must be between 1 and 100"},
    "target-timeout.json": {"code": "TARGET-SYSTEM-TIMED-OUT", "message": "The target system timed out."},
    "pii-echo-500.json": {
        "code": "PROCESSING-ERROR",
        "message": "Failed for customer Dana Whitfield <dana.whitfield@example.com> +15550100188 "
                   "at 42 Elm St, Springfield",
        "detail": "java.lang.NullPointerException at com.cdk.inventory.merchandising.VehicleMapper.map"
                  "(VehicleMapper.java:212)",
    },
}


def small_json(obj: dict) -> str:
    return json.dumps(obj, indent=2) + "\n"


# --------------------------------------------------------------------------
# Summaries, README, main
# --------------------------------------------------------------------------

def counts(items, key) -> dict[str, int]:
    out: dict[str, int] = {}
    for it in items:
        k = key(it)
        out[k] = out.get(k, 0) + 1
    return dict(sorted(out.items()))


def fmt_counts(d: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in d.items())


def vins_where(fleet: list[Vehicle], flag: str) -> list[str]:
    return [v.vin for v in fleet if v.extra.get(flag)]


def build_readme(cdk: list[Vehicle], feed: list[Vehicle], refresh: FeedRefresh, google: list[Vehicle],
                 cdk_json: dict) -> str:
    prices = [p for r in cdk_json["results"] for p in r["financials"]["prices"]]
    str_prices = sum(isinstance(p["amount"], str) for p in prices)
    cent_prices = sum(isinstance(p["amount"], float) for p in prices)
    odo_str = sum(isinstance(r["odometer"]["value"], str) for r in cdk_json["results"])
    cdk_makes = sorted({v.spec.make for v in cdk})

    def vl(fleet, flag):
        return ", ".join(f"`{x}`" for x in vins_where(fleet, flag))

    feed_quoted = sum('"' in v.extra["blurb"] for v in feed)
    feed_non_ascii = sum(any(ord(c) > 127 for c in v.extra["blurb"]) for v in feed)
    return f"""# wiremock-fixtures

Recorded-style upstream payloads for dms-bridge. They are used by the test
suite and served by the mock upstreams of the built-in demo.

All data here is **fictional** and was written by this project: dealerships,
addresses, VIN serials, people and prices are made up (VINs use realistic
manufacturer prefixes and valid check digits, but the serials are invented).
The files are licensed with the project under Apache-2.0.

Do not edit these files by hand. Regenerate them with

```sh
python3 scripts/gen_fixtures.py
```

The generator uses only the Python 3.11 standard library, fixed seeds and
fixed reference dates, so it produces byte-identical files on every run.
Every VIN is checked before it is written: 17 characters without I/O/Q,
model-year character (position 10) never U/Z/0 and matching the model year,
position 7 a letter (2010+ model years), correct check digit (position 9),
unique across all files. The check-digit routine is itself tested against
known valid and invalid VINs.

## `cdk/merchandisable-vehicles.json`

Imitates the CDK Fortellis *Merchandisable Vehicles v2* response for
dealership `demo-cdk`, a multi-brand store: new and certified units come from
its franchises ({", ".join(sorted(CDK_FRANCHISES))}), used units from any make.
It is the full result set as returned with `deleted=true` (removed units
included): `{{"summary": {{...}}, "results": [...]}}`, {len(cdk)} vehicles sorted
by `stockNumber` (prefix `C`).

- Categories: {fmt_counts(counts(cdk, lambda v: v.condition))}.
- `inventoryStatus`: {fmt_counts(counts(cdk, lambda v: v.status))}.
- {len(cdk_makes)} distinct makes: {", ".join(cdk_makes)}.

Deliberate quirks (the bridge must cope with whatever the upstream sends):

- Price `amount`s are mixed: {str_prices} of {len(prices)} are JSON strings such as
  `"57890.00"`, the rest are numbers ({cent_prices} with cents, e.g. `24995.5`).
- `SELLING` is the final price. Used/certified vehicles have no `MSRP` entry.
  2 used vehicles have only an `ADVERTISED` price (no `SELLING`): {vl(cdk, "no_selling")}.
- {odo_str} odometer values are strings with thousands separators (`"12,345"`).
- 1 used vehicle (a Canadian import) has odometer unit `KILOMETERS`: {vl(cdk, "km")}.
- 3 vehicles have `"deleted": true` (and `marketable: false`; their
  `inventoryStatus` is a stale `IN_STOCK`): {vl(cdk, "deleted")}.
- 2 vehicles are `SOLD` but not deleted (`marketable: false`): {vl(cdk, "sold")}.
- 5 new vehicles are `IN_TRANSIT` (odometer 0-10): {vl(cdk, "transit")}.
- 2 vehicles are `PENDING_SALE`: {vl(cdk, "pending")}.
- 1 vehicle has `"trim": null`: {vl(cdk, "no_trim")}.
- 1 vehicle has no `color` key at all: {vl(cdk, "no_color")}.
- `modifiedDateTime` values fall between 2026-11-18 and 2026-11-21 (UTC, `Z`);
  `lotDate` values between 2026-06-01 and 2026-11-15.

## `cdk/token.json`

OAuth client-credentials token response for the mock Fortellis identity endpoint.

## `cdk/errors/*.json`

Fortellis-style error bodies (`{{"code": ..., "message": ...}}`):

{chr(10).join(f"- `{name}`: `{body['code']}`" for name, body in ERRORS.items())}

`pii-echo-500.json` is a 500 body that echoes (fictional) customer data:
name, e-mail, phone number and street address plus a Java stack-trace
fragment. It exists to prove that the bridge never passes upstream error
text through to its clients or logs.

## `feed/homenet-inventory.csv`

Imitates a HomeNet/ICC-style dealer inventory CSV feed for dealership
`demo-feed` (`DealerID` `DEMO-FEED-01`), a Toyota/Subaru/Kia store that also
carries used vehicles of other makes. RFC 4180, UTF-8 (no BOM), CRLF line
endings, fields quoted only when needed. {len(feed)} rows sorted by `Stock` (prefix `F`).

- `Type`: {fmt_counts(counts(feed, lambda v: "New" if v.condition == "new" else "Used"))}
  ({sum(v.condition == "certified" for v in feed)} used rows have `Certified` = `Yes`).
- `Status`: {fmt_counts(counts(feed, lambda v: FEED_STATUS[v.status]))}.
- `SellingPrice` is the final price, formatted as `$24,995`, `24995.00` or `24995`.
  2 rows have an empty `SellingPrice` (call for price): {vl(feed, "call_for_price")}.
- `Miles` is either `12,345` or `12345`. `MSRP` appears only on new rows;
  `InternetPrice` only on some rows.
- `DateInStock` is US format `MM/DD/YYYY`. `ImageList` joins 1-4 URLs with `|`.
- `Description` contains commas; {feed_quoted} rows contain double quotes and
  {feed_non_ascii} rows a non-ASCII character (an em dash).
- In Transit (new): {vl(feed, "transit")}.
- Pending: {vl(feed, "pending")}.
- Sold but still listed: {vl(feed, "sold")}.

## `feed/homenet-inventory-next.csv`

The same feed one refresh later (same header, same row order, all other rows
byte-identical):

- 3 rows that were `In Stock` are gone (sold; the VIN disappears):
  {", ".join(f"`{v.vin}`" for v in refresh.removed)}.
- 1 new arrival appended: `{refresh.added.vin}` (stock `{refresh.added.stock}`).
- 1 price change: `{refresh.changed.vin}` `SellingPrice` `{refresh.old_price}` -> `{refresh.new_price}`.

## `feed/google-vehicle-listings.tsv`

Imitates a Google vehicle-listings-style feed for the fictional store
`{GOOGLE_STORE[0]}` ("{GOOGLE_STORE[1]}", a Mazda/Volkswagen store). Tab separated,
LF line endings, no quoting, {len(google)} rows.

- `condition`: {fmt_counts(counts(google, lambda v: "new" if v.condition == "new" else "used"))};
  `certified_pre-owned` = `yes` on {sum(v.condition == "certified" for v in google)} used rows.
- `price` is `18995 USD` or `18,995.00 USD`; `vehicle_msrp` only on new rows.
- `mileage` is `12000 miles`; `additional_image_link` is comma-joined URLs;
  `body_style` uses lower-case values (`suv`, `sedan`, `truck`, ...).

## `blackbook/`

Imitates Black Book UsedCarWS answers (`GET /UsedCarWS/UsedCarWS/UsedVehicle/VIN/{{vin}}`):
whole-dollar integers, `used_vehicles.used_vehicle_list[0]` with
`adjusted_tradein_{{clean,avg,rough}}`, `adjusted_whole_*`, `adjusted_retail_*`.

- `used-vehicle.json`: the answer for `{next(v.vin for v in cdk if v.condition != "new" and not v.deleted)}`,
  the first used unit of `cdk/merchandisable-vehicles.json`.
- `values-by-vin.json`: the same record for every used or certified unit of
  `cdk/merchandisable-vehicles.json`, keyed by full VIN, valued at its own
  mileage (`mileage`); the demo's mock Black Book serves it and adjusts for the
  mileage asked.
- `no-data.json`: `data_available: false` with a `NO_DATA` message, what an
  unknown VIN gets.

## `xtime/`

Imitates Cox Automotive Xtime scheduling answers for a Central-time store:

- `token.json`: the client-credentials token answer.
- `services.json`: the service menu (`services[]` of `opcode`, `serviceName`),
  {len(XTIME_SERVICES)} services.
- `availabilities.json`: open slots on {", ".join(XTIME_DAYS)}, every half hour
  from 07:30 to 16:00 with every third slot taken, as
  `appointmentDateTimeLocal` (`2026-12-01T07:30-0600`: minutes, offset without
  a colon), `durationMinutes`, `advisorId`.
- `error-invalid-opcode.json`: an in-band error (`success: false`, HTTP 200).
- `booking-ok.json`, `booking-waitlist.json`: answers to a booking
  (`POST /service/appointments-bookings`), the second with a waiting-list
  `status`.
- `error-slot-unavailable.json`: the in-band answer when the slot was taken.
- `cancel-ok.json`, `error-appointment-not-found.json`: answers to a
  cancellation of a known and of an unknown appointment id.

## Repair orders: `cdk/repair-orders/`, `tekion/`, `opentrack/`

Written by `scripts/gen_repair_orders.py` (not this script) from one fictional
order book of eight repair orders (four open or in progress, four closed;
Central time, "today" 2026-11-17), rendered in three upstream shapes. A test
checks that every shape maps to the same canonical orders.

- `cdk/repair-orders/`: CDK Drive long-operation replies: `start-open.json`,
  `start-closed.json` (`status: received`, `checkStatusAfterSeconds`),
  `status-received.json`, `status-complete.json`, `status-error.json`, and the
  results `result-open.json` / `result-closed.json` (`{{"data": [...]}}`; dates
  and times in separate fields, money and hours as strings, `cityStateZip` as
  one string, one-letter job status codes).
- `tekion/`: `token.json` (wrapped in `data`), `repair-orders-page-1.json` and
  `-page-2.json` (`meta.nextFetchKey` on the first), `repair-order-60102.json`,
  `repair-order-none.json`, `error-dealer.json` (`meta.status: failure` on
  HTTP 200); epoch-millisecond times, one object per pay type under `invoice`.
- `opentrack/`: Dealertrack OpenTrack SOAP 1.2 answers (`POST /serviceapi.asmx`,
  dates `YYYYMMDDHHMM`): `closed-repair-orders-YYYYMMDD.xml`
  (`GetClosedRepairOrders` for one close day: 2026-10-21, 2026-11-05,
  2026-11-13, 2026-11-14) and `closed-repair-orders-none.xml` (any other day);
  `repair-order-details-<number>.xml` (`GetClosedRepairOrderDetails` for 60080,
  60090, 60095, 60096) and `repair-order-details-none.xml` (an unknown number);
  `fault-authentication.xml` (`wsse:FailedAuthentication`) and
  `fault-dealer.xml` (`ot:InvalidDealer`), SOAP 1.2 faults served with HTTP 500.

## Hand-written sets

Neither this script nor `scripts/gen_repair_orders.py` writes these: they were
written by hand (or by one-off scripts) from each vendor's public material, and
each has its own README or SOURCES file citing where every shape comes from and
what is uncertain. The data is fictional all the same, and VINs are unique
across `wiremock-fixtures/`. Running this script leaves them alone.

- `reynolds/`: Reynolds & Reynolds RCI (ERA DMS) STAR-over-SOAP answers,
  inventory (`VehInvRec`) and repair orders, closed per posting day, open,
  by number, and errors; see `reynolds/README.md`.
- `jdpower/`: J.D. Power Valuation Services answers (`vehiclesByVin`,
  `vehicleAndValueByVehicleId`, no data, a refused key); see
  `jdpower/README.md`.
- `feed-xml/`: a Meta (Facebook) automotive inventory ads XML feed
  (`<listings><listing>`); see `feed-xml/README.md`.
- `activix/`: Activix CRM API v2 lead answers (created, statuses, pages,
  errors, a webhook); see `activix/README.md`.
- `tekion/inventory-page-1.json`, `tekion/inventory-page-2.json`: two pages of
  Tekion APC `vehicle-inventory`; see `tekion/INVENTORY-SOURCES.md`.
- `opentrack/vehicle-inventory.xml`: Dealertrack OpenTrack's
  `VehicleInventory` answer; see `opentrack/INVENTORY-SOURCES.md`.
"""


# ---------------------------------------------------------------------------
# Black Book-shaped valuations (UsedCarWS)
# ---------------------------------------------------------------------------

def trade_values(v: Vehicle) -> dict:
    """Adjusted values in whole dollars at the vehicle's own mileage: trade-in a
    fixed share of the retail value, average and rough below clean."""
    retail = used_value(v.spec, v.year, v.miles, False)
    clean = round_to(retail * 0.80, 25)
    return {
        "adjusted_tradein_clean": clean,
        "adjusted_tradein_avg": round_to(clean * 0.88, 25),
        "adjusted_tradein_rough": round_to(clean * 0.74, 25),
        "adjusted_whole_clean": round_to(clean * 1.06, 25),
        "adjusted_whole_avg": round_to(clean * 0.95, 25),
        "adjusted_whole_rough": round_to(clean * 0.80, 25),
        "adjusted_retail_clean": round_to(retail, 25),
        "adjusted_retail_avg": round_to(retail * 0.92, 25),
        "adjusted_retail_rough": round_to(retail * 0.80, 25),
    }


def blackbook_record(v: Vehicle, uvc: int) -> dict:
    return {
        "uvc": f"{v.year}{uvc:06d}",
        "vin": v.vin[:10],
        "model_year": str(v.year),
        "make": v.spec.make,
        "model": v.spec.model,
        "series": v.spec.trim,
        "style": v.spec.body,
        "mileage": v.miles,
        **trade_values(v),
    }


def render_blackbook(fleet: list[Vehicle]) -> tuple[str, str, str]:
    """One answer for the first used unit, the table the demo's mock serves
    (every used unit, keyed by full VIN, with the mileage its values are for),
    and the no-data answer."""
    used = [v for v in fleet if v.condition != "new" and not v.deleted]
    table = {v.vin: blackbook_record(v, i + 1) for i, v in enumerate(used)}
    one = {
        "used_vehicles": {"data_available": True, "used_vehicle_list": [table[used[0].vin]]},
        "warning_count": 0,
        "error_count": 0,
        "message_list": [],
    }
    none = {
        "used_vehicles": {"data_available": False, "used_vehicle_list": []},
        "warning_count": 0,
        "error_count": 1,
        "message_list": [{"type": "Error", "code": "NO_DATA", "message": "No data found for the VIN"}],
    }
    return small_json(one), small_json(table), small_json(none)


# ---------------------------------------------------------------------------
# Xtime-shaped service scheduling
# ---------------------------------------------------------------------------

XTIME_SERVICES = [
    ("01LOF", "Oil and filter change"),
    ("02ROT", "Tire rotation"),
    ("03BRK", "Brake inspection"),
    ("04ALN", "Four-wheel alignment"),
    ("05BAT", "Battery test and replacement"),
    ("06MPI", "Multi-point inspection"),
    ("07CAB", "Cabin air filter"),
    ("08WIP", "Wiper blades"),
]
# Three weekdays of the store's calendar, Central time (UTC-6 in December).
XTIME_DAYS = ["2026-12-01", "2026-12-02", "2026-12-03"]


def render_xtime() -> dict[str, str]:
    services = {"success": True, "services": [{"opcode": c, "serviceName": n} for c, n in XTIME_SERVICES]}
    slots = []
    for d, day in enumerate(XTIME_DAYS):
        for n in range(7 * 2 + 1, 16 * 2 + 1):  # 07:30 to 16:00, every half hour
            if (n + d) % 3 == 0:
                continue  # taken
            hh, mm = divmod(n * 30, 60)
            slots.append({
                "appointmentDateTimeLocal": f"{day}T{hh:02d}:{mm:02d}-0600",
                "durationMinutes": 30,
                "advisorId": f"ADV-{1 + (n % 2)}",
            })
    return {
        "token.json": small_json({"access_token": "demo-xtime-token", "token_type": "Bearer", "expires_in": 3600}),
        "services.json": small_json(services),
        "availabilities.json": small_json({"success": True, "availableAppointments": slots}),
        "error-invalid-opcode.json": small_json(
            {"success": False, "code": "INVALID_OPCODE", "message": "One or more opcodes are not valid for this dealer"}),
        "booking-ok.json": small_json({"success": True, "appointmentId": "XT-7001"}),
        "booking-waitlist.json": small_json({"success": True, "appointmentId": "XT-7002", "status": "WAITLIST"}),
        "error-slot-unavailable.json": small_json(
            {"success": False, "code": "SLOT_UNAVAILABLE", "message": "The requested time is no longer available"}),
        "cancel-ok.json": small_json({"success": True, "appointmentId": "XT-7001"}),
        "error-appointment-not-found.json": small_json(
            {"success": False, "code": "APPOINTMENT_NOT_FOUND", "message": "No appointment with this id"}),
    }


def write(path: Path, text: str) -> None:
    """Write text exactly as given (UTF-8, no newline translation)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="") as fh:
        fh.write(text)


def print_summary(cdk, feed, refresh, google) -> None:
    print("== cdk/merchandisable-vehicles.json (demo-cdk)")
    print("  category:", fmt_counts(counts(cdk, lambda v: v.condition)))
    print("  inventoryStatus:", fmt_counts(counts(cdk, lambda v: v.status)))
    print("  makes:", len({v.spec.make for v in cdk}))
    for label, flag in [("deleted", "deleted"), ("SOLD", "sold"), ("IN_TRANSIT", "transit"),
                        ("PENDING_SALE", "pending"), ("no SELLING price", "no_selling"),
                        ("KILOMETERS", "km"), ("trim null", "no_trim"), ("no color", "no_color")]:
        print(f"  {label}: {' '.join(vins_where(cdk, flag))}")
    print("== feed/homenet-inventory.csv (demo-feed)")
    print("  type:", fmt_counts(counts(feed, lambda v: "New" if v.condition == "new" else "Used")),
          "| certified:", sum(v.condition == "certified" for v in feed))
    print("  status:", fmt_counts(counts(feed, lambda v: FEED_STATUS[v.status])))
    for label, flag in [("Sold", "sold"), ("In Transit", "transit"), ("Pending", "pending"),
                        ("empty SellingPrice", "call_for_price")]:
        print(f"  {label}: {' '.join(vins_where(feed, flag))}")
    print("== feed/homenet-inventory-next.csv")
    print("  removed:", " ".join(v.vin for v in refresh.removed))
    print("  added:", refresh.added.vin, refresh.added.stock)
    print(f"  price changed: {refresh.changed.vin} {refresh.old_price} -> {refresh.new_price}")
    print("== feed/google-vehicle-listings.tsv (DEMO-VLA)")
    print("  condition:", fmt_counts(counts(google, lambda v: v.condition)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output directory")
    parser.add_argument("--quiet", action="store_true", help="do not print the summary")
    args = parser.parse_args()

    self_test_vins()
    vins = VinFactory()
    cdk = build_cdk(vins)
    feed = build_feed(vins)
    next_rows, refresh = build_feed_next(vins, feed)
    google = build_google(vins)

    cdk_text = render_cdk(cdk)
    cdk_json = json.loads(cdk_text)
    assert len({v.spec.make for v in cdk}) >= 12
    assert len({v.stock for v in cdk + feed + google + [refresh.added]}) == len(cdk) + len(feed) + len(google) + 1
    for vin in vins.seen:
        assert vin_is_valid(vin)

    out: Path = args.out
    write(out / "cdk" / "merchandisable-vehicles.json", cdk_text)
    write(out / "cdk" / "token.json", small_json(TOKEN))
    for name, body in ERRORS.items():
        write(out / "cdk" / "errors" / name, small_json(body))
    write(out / "feed" / "homenet-inventory.csv", render_csv([feed_row(v) for v in feed]))
    write(out / "feed" / "homenet-inventory-next.csv", render_csv(next_rows))
    write(out / "feed" / "google-vehicle-listings.tsv", render_google(google))
    bb_one, bb_table, bb_none = render_blackbook(cdk)
    write(out / "blackbook" / "used-vehicle.json", bb_one)
    write(out / "blackbook" / "values-by-vin.json", bb_table)
    write(out / "blackbook" / "no-data.json", bb_none)
    for name, body in render_xtime().items():
        write(out / "xtime" / name, body)
    write(out / "README.md", build_readme(cdk, feed, refresh, google, cdk_json))

    if not args.quiet:
        print_summary(cdk, feed, refresh, google)


if __name__ == "__main__":
    main()
