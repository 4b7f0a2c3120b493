#!/usr/bin/env python3
"""Generate the repair-order fixtures used by dms-bridge.

One fictional service department's repair orders, rendered in three upstream
shapes:

* ``wiremock-fixtures/cdk/repair-orders/``: CDK Drive-style long-operation
  replies (start, status) and results for open and closed orders; money and
  hours as strings, the customer's city, state and ZIP as one string.
* ``wiremock-fixtures/tekion/``: Tekion-style ``repair-orders`` pages with a
  ``meta.nextFetchKey`` cursor, epoch-millisecond times, pay types as objects.
* ``wiremock-fixtures/opentrack/``: Dealertrack OpenTrack-style SOAP 1.2
  replies to ``GetClosedRepairOrders`` and ``GetClosedRepairOrderDetails``,
  ``YYYYMMDDHHMM`` dates, and a WS-Security fault.

Everything is fictional (people, phone numbers, e-mail addresses, VIN serials)
and deterministic: running the script twice yields byte-identical files.

Usage (from the repository root)::

    python3 scripts/gen_repair_orders.py
"""

from __future__ import annotations

import datetime as dt
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from xml.sax.saxutils import escape
from zoneinfo import ZoneInfo

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gen_fixtures import vin_check_char, vin_is_valid, write  # noqa: E402

OUT = Path(__file__).resolve().parent.parent / "wiremock-fixtures"
# The fixtures' dealership runs on US Central time (CDT until 1 November 2026).
ZONE = ZoneInfo("America/Chicago")


def vin(draft16: str) -> str:
    """A valid VIN from 8 + 8 characters (the check digit goes in between)."""
    draft = draft16[:8] + "0" + draft16[8:]
    out = draft[:8] + vin_check_char(draft) + draft[9:]
    assert vin_is_valid(out), out
    return out


@dataclass
class Job:
    line: str
    op_code: str
    description: str
    status: str  # not_started | in_progress | on_hold | completed
    pay: str  # customer | warranty | internal
    labor: str
    parts: str
    hours: str


@dataclass
class RepairOrder:
    number: str
    opened: dt.datetime
    promised: dt.datetime | None
    closed: dt.datetime | None
    advisor: tuple[str, str]
    customer: tuple[str, str]
    phone: str
    email: str
    street: str
    city_state_zip: tuple[str, str, str]
    vin: str
    year: int
    make: str
    model: str
    miles_in: int
    miles_out: int | None
    jobs: list[Job] = field(default_factory=list)

    @property
    def status(self) -> str:
        if self.closed:
            return "closed"
        started = any(j.status != "not_started" for j in self.jobs)
        return "in_progress" if started else "open"


def at(day: int, hh: int, mm: int, month: int = 11) -> dt.datetime:
    return dt.datetime(2026, month, day, hh, mm, tzinfo=ZONE)


CIVIC = vin("2HGFC2F5KH512345")
F150 = vin("1FTEW1EP6MFA6789")
RAV4 = vin("2T3P1RFVXLC01234")
EQUINOX = vin("2GNAXUEVXL6123456"[:16])
MODEL3 = vin("5YJ3E1EA6MF98765")
ODYSSEY = vin("5FNRL6H7XLB05432")

ADVISORS = [("Pat", "Moreno"), ("Sam", "Okafor")]

ORDERS = [
    RepairOrder("60101", at(16, 8, 15), at(16, 17, 0), None, ADVISORS[0], ("Dana", "Whitfield"),
                "+15125550101", "dana.whitfield@example.com", "12 Elm St", ("AUSTIN", "TX", "78701"),
                CIVIC, 2019, "HONDA", "CIVIC", 48210, None,
                [Job("A", "01LOF", "Oil and filter change", "not_started", "customer", "39.95", "10.00", "0.5")]),
    RepairOrder("60102", at(16, 9, 5), at(17, 12, 0), None, ADVISORS[1], ("Luis", "Ortega"),
                "+15125550102", "luis.ortega@example.com", "48 Pecan Ave", ("ROUND ROCK", "TX", "78664"),
                F150, 2021, "FORD", "F-150", 30550, None,
                [Job("A", "05ROT", "Rotate tires", "completed", "customer", "24.95", "0.00", "0.3"),
                 Job("B", "13BRK", "Front brake pads and rotors", "in_progress", "customer", "180.00", "212.40", "1.8"),
                 Job("C", "22RCL", "Recall 21S45 software update", "on_hold", "warranty", "0.00", "0.00", "0.4")]),
    RepairOrder("60103", at(15, 14, 30), at(18, 17, 0), None, ADVISORS[0], ("Mei", "Chen"),
                "+15125550103", "mei.chen@example.com", "7 Sunset Blvd", ("AUSTIN", "TX", "78704"),
                RAV4, 2020, "TOYOTA", "RAV4", 61020, None,
                [Job("A", "31HVB", "Hybrid battery inspection", "completed", "warranty", "0.00", "0.00", "1.0"),
                 Job("B", "40AC", "A/C not cooling: diagnose", "in_progress", "customer", "149.00", "0.00", "1.0")]),
    RepairOrder("60104", at(17, 7, 50), at(17, 16, 0), None, ADVISORS[1], ("Grace", "Adeyemi"),
                "+15125550104", "grace.adeyemi@example.com", "301 Lamar Blvd", ("AUSTIN", "TX", "78703"),
                EQUINOX, 2020, "CHEVROLET", "EQUINOX", 52300, None,
                [Job("A", "02MPI", "Multi-point inspection", "not_started", "internal", "0.00", "0.00", "0.5")]),
    RepairOrder("60095", at(12, 10, 0), at(13, 17, 0), at(13, 16, 30), ADVISORS[0], ("Luis", "Ortega"),
                "+15125550102", "luis.ortega@example.com", "48 Pecan Ave", ("ROUND ROCK", "TX", "78664"),
                F150, 2021, "FORD", "F-150", 30410, 30422,
                [Job("A", "01LOF", "Oil and filter change", "completed", "customer", "39.95", "12.50", "0.5"),
                 Job("B", "22RCL", "Recall 21S45 inspection", "completed", "warranty", "0.00", "0.00", "0.3")]),
    RepairOrder("60096", at(13, 8, 30), at(14, 12, 0), at(14, 11, 45), ADVISORS[1], ("Noah", "Fischer"),
                "+15125550106", "noah.fischer@example.com", "9 Creek Rd", ("CEDAR PARK", "TX", "78613"),
                MODEL3, 2021, "TESLA", "MODEL 3", 40100, 40104,
                [Job("A", "05ROT", "Rotate tires", "completed", "customer", "24.95", "0.00", "0.3"),
                 Job("B", "60WIP", "Replace wiper blades", "completed", "customer", "0.00", "38.00", "0.1")]),
    RepairOrder("60090", at(5, 9, 0), at(5, 15, 0), at(5, 14, 10), ADVISORS[0], ("Ava", "Lindqvist"),
                "+15125550107", "ava.lindqvist@example.com", "55 Barton Springs Rd", ("AUSTIN", "TX", "78704"),
                ODYSSEY, 2020, "HONDA", "ODYSSEY", 70880, 70886,
                [Job("A", "13BRK", "Rear brake pads", "completed", "customer", "120.00", "96.80", "1.2")]),
    RepairOrder("60080", at(20, 11, 0, month=10), at(20, 16, 0, month=10), at(21, 10, 0, month=10),
                ADVISORS[1], ("Dana", "Whitfield"), "+15125550101", "dana.whitfield@example.com", "12 Elm St",
                ("AUSTIN", "TX", "78701"), CIVIC, 2019, "HONDA", "CIVIC", 45020, 45031,
                [Job("A", "01LOF", "Oil and filter change", "completed", "customer", "39.95", "10.00", "0.5")]),
]

# The tax rate charged on customer-pay parts (fictional).
TAX = 0.0825
PAY_CODES = {"customer": "C", "warranty": "W", "internal": "I"}
CDK_JOB_STATUS = {"not_started": "O", "in_progress": "I", "on_hold": "H", "completed": "C"}
TEKION_STATUS = {"open": "OPEN", "in_progress": "IN_PROGRESS", "closed": "CLOSED"}
TEKION_PAY = {"customer": "CUSTOMER", "warranty": "WARRANTY", "internal": "INTERNAL"}


def cents(text: str) -> int:
    whole, frac = text.split(".")
    return int(whole) * 100 + int(frac)


def money(c: int) -> str:
    return f"{c // 100}.{c % 100:02d}"


def totals(ro: RepairOrder) -> dict[str, dict[str, int]]:
    """Per pay type: labor, parts, tax and total in cents."""
    out: dict[str, dict[str, int]] = {}
    for job in ro.jobs:
        t = out.setdefault(job.pay, {"labor": 0, "parts": 0, "tax": 0})
        t["labor"] += cents(job.labor)
        t["parts"] += cents(job.parts)
    for pay, t in out.items():
        t["tax"] = round(t["parts"] * TAX) if pay == "customer" else 0
        t["total"] = t["labor"] + t["parts"] + t["tax"]
    return out


def dumps(obj) -> str:
    return json.dumps(obj, indent=2) + "\n"


# --------------------------------------------------------------------------
# CDK Drive
# --------------------------------------------------------------------------

def cdk_record(ro: RepairOrder) -> dict:
    first, last = ro.customer
    city, state, zip_code = ro.city_state_zip
    d = lambda t: t.strftime("%Y-%m-%d") if t else ""  # noqa: E731
    h = lambda t: t.strftime("%H:%M") if t else ""  # noqa: E731
    return {
        "roNumber": ro.number,
        "hostItemId": f"HI{ro.number}",
        "openDate": d(ro.opened), "openTime": h(ro.opened),
        "promisedDate": d(ro.promised), "promisedTime": h(ro.promised),
        "closedDate": d(ro.closed), "closedTime": h(ro.closed),
        "mileage": str(ro.miles_in),
        "mileageOut": str(ro.miles_out) if ro.miles_out else "",
        "serviceAdvisor": {"employeeId": f"SA{ADVISORS.index(ro.advisor) + 1}",
                           "name": f"{ro.advisor[1].upper()}, {ro.advisor[0].upper()}"},
        "contactEmailAddress": ro.email,
        "contactPhoneNumber": ro.phone[2:],
        "customer": {
            "customerId": f"C{ro.phone[-4:]}",
            "name1": f"{last.upper()}, {first.upper()}",
            "name2": "",
            "address": {"addressLine1": ro.street.upper(), "addressLine2": "",
                        "cityStateZip": f"{city}, {state} {zip_code}"},
            "phoneNumbers": [{"number": ro.phone[2:], "extension": "", "description": "CELL"}],
            "emailAddresses": [{"address": ro.email, "desc": "HOME"}],
        },
        "vehicle": {"vin": ro.vin, "make": ro.make[:4], "makeDesc": ro.make, "model": ro.model[:4],
                    "modelDesc": ro.model, "year": str(ro.year), "licenseNumber": "", "vehId": f"V{ro.number}"},
        "operations": [{"line": {
            "lineCode": j.line,
            "serviceRequest": j.description,
            "statusCode": CDK_JOB_STATUS[j.status],
            "statusDesc": j.status.replace("_", " ").title(),
            "laborOperations": [{"opCode": j.op_code, "opCodeDesc": j.description,
                                 "payType": PAY_CODES[j.pay], "sale": j.labor, "soldHours": j.hours}],
        }} for j in ro.jobs],
        "totals": [{"payType": PAY_CODES[pay], "roSale": money(t["total"]), "laborSale": money(t["labor"]),
                    "partsSale": money(t["parts"]), "roTax": money(t["tax"])} for pay, t in totals(ro).items()],
    }


def cdk_operation(op_id: str, status: str, after: int) -> str:
    base = "https://api.fortellis.io/cdk/drive/servicerepairorder/v1/long-operations"
    return dumps({
        "operationId": op_id, "status": status,
        "receivedDateTime": "2026-11-17T14:00:00Z", "updatedDateTime": "2026-11-17T14:00:01Z",
        "checkStatusAfterSeconds": after,
        "_links": {"status": {"href": f"{base}/{op_id}/status"}, "result": {"href": f"{base}/{op_id}/result"}},
    })


def render_cdk() -> dict[str, str]:
    open_orders = [cdk_record(ro) for ro in ORDERS if ro.status != "closed"]
    closed = [cdk_record(ro) for ro in ORDERS if ro.status == "closed"]
    return {
        "start-open.json": cdk_operation("op-open-7f3a", "received", 1),
        "start-closed.json": cdk_operation("op-closed-91c2", "received", 1),
        "status-received.json": cdk_operation("op-open-7f3a", "received", 1),
        "status-complete.json": cdk_operation("op-open-7f3a", "complete", 0),
        "status-error.json": cdk_operation("op-open-7f3a", "error", 0),
        "result-open.json": dumps({"data": open_orders}),
        "result-closed.json": dumps({"data": closed}),
    }


# --------------------------------------------------------------------------
# Tekion
# --------------------------------------------------------------------------

def ms(t: dt.datetime | None) -> int | None:
    return int(t.timestamp() * 1000) if t else None


def tekion_record(ro: RepairOrder) -> dict:
    first, last = ro.customer
    city, state, zip_code = ro.city_state_zip
    pays = totals(ro)
    invoice = {f"{pay}Pay": {"amount": t["total"] / 100, "laborAmount": t["labor"] / 100,
                             "partsAmount": t["parts"] / 100, "taxAmount": t["tax"] / 100}
               for pay, t in pays.items()}
    invoice["invoiceAmount"] = sum(t["total"] for t in pays.values()) / 100
    return {
        "id": f"tk-{ro.number}",
        "repairOrderNumber": ro.number,
        "status": TEKION_STATUS[ro.status],
        "checkinTime": ms(ro.opened),
        "promisedTime": ms(ro.promised),
        "closedTime": ms(ro.closed),
        "primaryAdvisor": [{"firstName": ro.advisor[0], "lastName": ro.advisor[1]}],
        "customer": {"arcId": f"arc-{ro.phone[-4:]}", "firstName": first, "lastName": last, "email": ro.email,
                     "phones": [{"phoneType": "MOBILE", "number": ro.phone}],
                     "address": {"line1": ro.street, "line2": "", "city": city.title(), "state": state,
                                 "zip": zip_code}},
        "vehicle": {"vin": ro.vin, "make": ro.make.title(), "model": ro.model.title(), "year": ro.year,
                    "mileageIn": {"value": ro.miles_in, "unit": "MI"},
                    "mileageOut": {"value": ro.miles_out, "unit": "MI"} if ro.miles_out else None},
        "jobs": [{"jobNumber": str(i + 1), "payType": TEKION_PAY[j.pay], "concern": j.description,
                  "status": j.status.upper(), "operations": [{"opcode": j.op_code,
                                                              "opcodeDescription": j.description}]}
                 for i, j in enumerate(ro.jobs)],
        "invoice": invoice,
    }


def render_tekion() -> dict[str, str]:
    records = [tekion_record(ro) for ro in ORDERS]
    page1, page2 = records[:5], records[5:]
    return {
        "token.json": dumps({"data": {"access_token": "demo-tekion-token", "token_type": "Bearer",
                                      "expire_in": 86400}}),
        "repair-orders-page-1.json": dumps({"meta": {"status": "success", "currentPage": 1, "pages": 2,
                                                     "nextFetchKey": "fk-2-a81c"}, "data": page1}),
        "repair-orders-page-2.json": dumps({"meta": {"status": "success", "currentPage": 2, "pages": 2},
                                            "data": page2}),
        "repair-order-60102.json": dumps({"meta": {"status": "success", "currentPage": 1, "pages": 1},
                                          "data": [tekion_record(ORDERS[1])]}),
        "repair-order-none.json": dumps({"meta": {"status": "success", "currentPage": 1, "pages": 1},
                                         "data": []}),
        "error-dealer.json": dumps({"meta": {"status": "failure", "code": "INVALID_DEALER_ID",
                                             "message": "dealer_id is not entitled for this app"}, "data": []}),
    }


# --------------------------------------------------------------------------
# Dealertrack OpenTrack (SOAP 1.2)
# --------------------------------------------------------------------------

SOAP_HEAD = ('<?xml version="1.0" encoding="utf-8"?>\n'
             '<soap:Envelope xmlns:soap="http://www.w3.org/2003/05/soap-envelope" '
             'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
             'xmlns:xsd="http://www.w3.org/2001/XMLSchema">\n  <soap:Body>\n')
SOAP_TAIL = "  </soap:Body>\n</soap:Envelope>\n"
OT_PAY = {"customer": "C", "warranty": "W", "internal": "I"}
OT_PART_GROUP = {"customer": "O", "warranty": "W", "internal": "I"}


def ot(t: dt.datetime | None) -> str:
    return t.strftime("%Y%m%d%H%M") if t else ""


def el(name: str, value, indent: int) -> str:
    return f"{' ' * indent}<{name}>{escape(str(value))}</{name}>\n"


def opentrack_ro(ro: RepairOrder, indent: int) -> str:
    first, last = ro.customer
    pad = " " * indent
    out = [f"{pad}<RepairOrder>\n"]
    i = indent + 2
    for name, value in [("RepairOrderNumber", ro.number), ("OpenDate", ot(ro.opened)),
                        ("PromisedDate", ot(ro.promised)), ("CloseDate", ot(ro.closed)),
                        ("ServiceWriterName", f"{ro.advisor[0]} {ro.advisor[1]}"),
                        ("CustomerName", f"{last.upper()}, {first.upper()}"), ("CustomerKey", f"CK{ro.phone[-4:]}"),
                        ("VIN", ro.vin), ("ModelYear", ro.year), ("Make", ro.make), ("Model", ro.model),
                        ("MileageIn", ro.miles_in), ("MileageOut", ro.miles_out or "")]:
        out.append(el(name, value, i))
    out.append(f"{' ' * i}<LaborDetails>\n")
    for j in ro.jobs:
        out.append(f"{' ' * (i + 2)}<Labor>\n")
        for name, value in [("LineCode", j.line), ("LineType", "A"), ("LaborOpCode", j.op_code),
                            ("Description", j.description), ("LinePaymentMethod", OT_PAY[j.pay]),
                            ("SoldHours", j.hours), ("LaborAmount", j.labor)]:
            out.append(el(name, value, i + 4))
        out.append(f"{' ' * (i + 2)}</Labor>\n")
    out.append(f"{' ' * i}</LaborDetails>\n")
    out.append(f"{' ' * i}<Parts>\n")
    for j in ro.jobs:
        if cents(j.parts) == 0:
            continue
        out.append(f"{' ' * (i + 2)}<Part>\n")
        for name, value in [("LineCode", j.line), ("TransGroup", OT_PART_GROUP[j.pay]), ("Quantity", "1"),
                            ("NetPrice", j.parts)]:
            out.append(el(name, value, i + 4))
        out.append(f"{' ' * (i + 2)}</Part>\n")
    out.append(f"{' ' * i}</Parts>\n")
    tax = totals(ro).get("customer", {}).get("tax", 0)
    out.append(el("CustomerPayTax", money(tax), i))
    out.append(f"{pad}</RepairOrder>\n")
    return "".join(out)


def soap(operation: str, inner: str) -> str:
    return (SOAP_HEAD + f'    <{operation}Response xmlns="opentrack.dealertrack.com">\n'
            f"      <{operation}Result>\n{inner}      </{operation}Result>\n"
            f"    </{operation}Response>\n" + SOAP_TAIL)


def render_opentrack() -> dict[str, str]:
    files = {}
    closed = [ro for ro in ORDERS if ro.closed]
    by_day: dict[str, list[RepairOrder]] = {}
    for ro in closed:
        by_day.setdefault(ro.closed.strftime("%Y%m%d"), []).append(ro)
    for day, ros in sorted(by_day.items()):
        inner = "".join(opentrack_ro(ro, 8) for ro in ros)
        files[f"closed-repair-orders-{day}.xml"] = soap("GetClosedRepairOrders", inner)
    files["closed-repair-orders-none.xml"] = soap("GetClosedRepairOrders", "")
    for ro in closed:
        files[f"repair-order-details-{ro.number}.xml"] = soap(
            "GetClosedRepairOrderDetails", opentrack_ro(ro, 8))
    files["repair-order-details-none.xml"] = soap("GetClosedRepairOrderDetails", "")
    files["fault-authentication.xml"] = (
        SOAP_HEAD + "    <soap:Fault>\n      <soap:Code>\n        <soap:Value>soap:Sender</soap:Value>\n"
        "        <soap:Subcode>\n          <soap:Value xmlns:wsse=\"http://docs.oasis-open.org/wss/2004/01/"
        "oasis-200401-wss-wssecurity-secext-1.0.xsd\">wsse:FailedAuthentication</soap:Value>\n"
        "        </soap:Subcode>\n      </soap:Code>\n      <soap:Reason>\n"
        "        <soap:Text xml:lang=\"en\">The security token could not be authenticated or authorized."
        "</soap:Text>\n      </soap:Reason>\n    </soap:Fault>\n" + SOAP_TAIL)
    files["fault-dealer.xml"] = files["fault-authentication.xml"].replace(
        "wsse:FailedAuthentication", "ot:InvalidDealer").replace(
        "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd",
        "opentrack.dealertrack.com").replace("xmlns:wsse", "xmlns:ot").replace(
        "The security token could not be authenticated or authorized.",
        "Dealer EnterpriseCode/CompanyNumber not found.")
    return files


def main() -> None:
    for name, text in render_cdk().items():
        write(OUT / "cdk" / "repair-orders" / name, text)
    for name, text in render_tekion().items():
        write(OUT / "tekion" / name, text)
    for name, text in render_opentrack().items():
        write(OUT / "opentrack" / name, text)


if __name__ == "__main__":
    main()
