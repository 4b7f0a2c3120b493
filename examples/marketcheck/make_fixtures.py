#!/usr/bin/env python3
"""Writes the tutorial's MarketCheck fixture set (made-up vehicles, our own data).

The set was generated once by this script and then committed; run it again
only to change the set (it overwrites fixtures/*.json). Every VIN gets a
valid North American check digit (position 9).
"""
import json
import random
from pathlib import Path

HERE = Path(__file__).resolve().parent / "fixtures"
DEALER_ID = "1099001"
PAGE = 50
COUNT = 62

TRANSLIT = {**{str(d): d for d in range(10)},
            **dict(zip("ABCDEFGH", range(1, 9))), **dict(zip("JKLMN", range(1, 6))),
            "P": 7, "R": 9, **dict(zip("STUVWXYZ", range(2, 10)))}
WEIGHTS = [8, 7, 6, 5, 4, 3, 2, 10, 0, 9, 8, 7, 6, 5, 4, 3, 2]
YEAR_CODE = {2019: "K", 2020: "L", 2021: "M", 2022: "N", 2023: "P", 2024: "R", 2025: "S", 2026: "T"}


def vin(prefix8, year, plant, serial):
    body = f"{prefix8}0{YEAR_CODE[year]}{plant}{serial:06d}"
    total = sum(TRANSLIT[c] * w for c, w in zip(body, WEIGHTS))
    check = total % 11
    return body[:8] + ("X" if check == 10 else str(check)) + body[9:]


MODELS = [
    # prefix8, make, model, trim, body, drivetrain, fuel, engine, transmission, doors, base price
    ("1HGCY1F3", "Honda", "Accord", "EX", "Sedan", "FWD", "Unleaded", "1.5L I4", "Automatic", 4, 31500),
    ("5J6RS6H5", "Honda", "CR-V", "EX-L", "SUV", "AWD", "Unleaded", "1.5L I4", "Automatic", 4, 36800),
    ("4T1DAACK", "Toyota", "Camry", "SE", "Sedan", "FWD", "Unleaded", "2.5L I4", "Automatic", 4, 30900),
    ("2T3P1RFV", "Toyota", "RAV4", "XLE", "SUV", "AWD", "Unleaded", "2.5L I4", "Automatic", 4, 34200),
    ("1FTFW1E5", "Ford", "F-150", "XLT", "Pickup", "4WD", "Unleaded", "3.5L V6", "Automatic", 4, 52400),
    ("3GNKBKRS", "Chevrolet", "Blazer", "2LT", "SUV", "AWD", "Unleaded", "2.0L I4", "Automatic", 4, 39900),
    ("5NMJBCDE", "Hyundai", "Tucson", "SEL", "SUV", "AWD", "Unleaded", "2.5L I4", "Automatic", 4, 32100),
    ("1N4BL4DV", "Nissan", "Altima", "SV", "Sedan", "FWD", "Unleaded", "2.5L I4", "CVT", 4, 28700),
]
COLORS = [("Platinum White Pearl", "Black"), ("Lunar Silver Metallic", "Gray"),
          ("Crystal Black Pearl", "Ivory"), ("Radiant Red Metallic", "Black"),
          ("Oxford White", "Medium Earth Gray"), ("Midnight Blue", "Charcoal")]


def listing(i, rng):
    prefix, make, model, trim, body, drive, fuel, engine, trans, doors, base = MODELS[i % len(MODELS)]
    kind = ["new", "new", "used", "certified"][i % 4]
    year = 2026 if kind == "new" else rng.choice([2021, 2022, 2023, 2024])
    v = vin(prefix, year, "A", 100000 + i * 7919 % 900000)
    stock = f"MC{26000 + i}"
    price = base if kind == "new" else base - (2026 - year) * 2900 - rng.randrange(0, 1500, 100)
    miles = rng.randrange(3, 40) if kind == "new" else rng.randrange(8000, 62000, 7)
    ext, interior = COLORS[i % len(COLORS)]
    seen = f"2026-{9 + i % 3:02d}-{1 + i % 27:02d}T00:00:00Z"
    slug = f"{kind}-{year}-{make}-{model}-{v}".lower().replace(" ", "-")
    return {
        "id": f"{v}-{rng.getrandbits(32):08x}-{rng.getrandbits(16):04x}",
        "vin": v,
        "heading": f"{'Certified ' if kind == 'certified' else ('New ' if kind == 'new' else 'Used ')}{year} {make} {model} {trim}",
        "price": price,
        "msrp": base + 1200 if kind == "new" else None,
        "miles": miles,
        "stock_no": stock,
        "inventory_type": kind,
        "vdp_url": f"https://www.prairie-motors.example/inventory/{slug}",
        "exterior_color": ext,
        "interior_color": interior,
        "dom": 1 + i % 90,
        "first_seen_at_date": seen,
        "build": {
            "year": year, "make": make, "model": model, "trim": trim,
            "body_type": body, "transmission": trans, "drivetrain": drive,
            "fuel_type": fuel, "engine": engine, "doors": doors,
        },
        "media": {"photo_links": [
            f"https://img.prairie-motors.example/{v}/{n}.jpg" for n in range(1, 2 + i % 3)
        ]},
        "dealer": {
            "id": int(DEALER_ID), "website": "prairie-motors.example",
            "name": "Prairie Motors (tutorial)", "city": "Lincoln", "state": "NE",
            "zip": "68508", "country": "US",
        },
    }


def main():
    rng = random.Random(31)
    items = [listing(i, rng) for i in range(COUNT)]
    for item in items:
        if item["msrp"] is None:
            del item["msrp"]
    pages = [items[:PAGE], items[PAGE:]]
    exchanges = []
    for n, page in enumerate(pages, 1):
        name = f"00{n}-get-v2-dealerships-inventory.json"
        (HERE / name).write_text(json.dumps({"num_found": COUNT, "listings": page}, indent=2) + "\n")
        exchanges.append({
            "method": "GET",
            "path": "/v2/dealerships/inventory",
            "query": [["api_key", "REDACTED"], ["dealer_id", DEALER_ID],
                      ["rows", str(PAGE)], ["start", str((n - 1) * PAGE)]],
            "request_headers": {"accept": "application/json"},
            "status": 200,
            "headers": {"content-type": "application/json"},
            "body": name,
            "elapsed_ms": 180,
        })
    fixtures = {
        "schema_version": 1,
        "upstream": "marketcheck",
        "kind": "rest",
        "profile": "./marketcheck.toml",
        "urls": [{"key": "base_url", "path": "/v2"}],
        "recorded_at": "2026-11-27T12:00:00Z",
        "recorded_by": "hand-written (examples/marketcheck/make_fixtures.py)",
        "exchanges": exchanges,
    }
    (HERE / "fixtures.json").write_text(json.dumps(fixtures, indent=2) + "\n")


if __name__ == "__main__":
    main()
