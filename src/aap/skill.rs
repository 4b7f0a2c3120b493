//! The five AAP v1.3 skills: their ids, wire types and media types, and the
//! canonical tool each one runs as.

use crate::model::Domain;

/// An AAP skill. The wire names no skill id: a request's data part says
/// `type: "<skill id>.request"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Skill {
    DealerInformation,
    InventoryFacets,
    InventorySearch,
    InventoryVehicle,
    LeadSubmit,
}

impl Skill {
    pub const ALL: [Skill; 5] = [
        Skill::DealerInformation,
        Skill::InventoryFacets,
        Skill::InventorySearch,
        Skill::InventoryVehicle,
        Skill::LeadSubmit,
    ];

    pub fn id(self) -> &'static str {
        match self {
            Skill::DealerInformation => "dealer.information",
            Skill::InventoryFacets => "inventory.facets",
            Skill::InventorySearch => "inventory.search",
            Skill::InventoryVehicle => "inventory.vehicle",
            Skill::LeadSubmit => "lead.submit",
        }
    }

    /// The schema and media-type stem (`inventory.vehicle`'s is `vehicle-detail`).
    pub fn stem(self) -> &'static str {
        match self {
            Skill::DealerInformation => "dealer-information",
            Skill::InventoryFacets => "inventory-facets",
            Skill::InventorySearch => "inventory-search",
            Skill::InventoryVehicle => "vehicle-detail",
            Skill::LeadSubmit => "lead-submit",
        }
    }

    /// The skill whose request `type` this is.
    pub fn from_request_type(kind: &str) -> Option<Skill> {
        let id = kind.strip_suffix(".request")?;
        Skill::ALL.into_iter().find(|s| s.id() == id)
    }

    pub fn response_type(self) -> String {
        format!("{}.response", self.id())
    }

    pub fn request_media_type(self) -> String {
        format!("application/vnd.autoagent.{}-request+json", self.stem())
    }

    pub fn response_media_type(self) -> String {
        format!("application/vnd.autoagent.{}-response+json", self.stem())
    }

    /// The canonical tool the skill runs as, through the same pipeline as MCP.
    pub fn tool(self) -> &'static str {
        match self {
            Skill::DealerInformation => "dealership.get",
            Skill::InventoryFacets => "inventory.facets",
            Skill::InventorySearch => "inventory.search",
            Skill::InventoryVehicle => "inventory.get",
            Skill::LeadSubmit => "leads.create",
        }
    }

    /// The route a dealership needs for the skill to be offered.
    pub fn needs(self) -> Option<Domain> {
        match self {
            Skill::DealerInformation => None,
            Skill::InventoryFacets | Skill::InventorySearch | Skill::InventoryVehicle => {
                Some(Domain::Inventory)
            }
            Skill::LeadSubmit => Some(Domain::Leads),
        }
    }

    /// Whether AAP lets a buyer call the skill without credentials (the
    /// dealership must also allow anonymous reads).
    pub fn may_be_anonymous(self) -> bool {
        self != Skill::LeadSubmit
    }

    pub fn name(self) -> &'static str {
        match self {
            Skill::DealerInformation => "Dealer Information",
            Skill::InventoryFacets => "Inventory Facets",
            Skill::InventorySearch => "Inventory Search",
            Skill::InventoryVehicle => "Vehicle Detail",
            Skill::LeadSubmit => "Lead Submission",
        }
    }

    pub fn description(self) -> &'static str {
        match self {
            Skill::DealerInformation => {
                "The dealership's profile: name, address, location, phones, business hours by department, timezone and capabilities."
            }
            Skill::InventoryFacets => {
                "Counts of the vehicles for sale by make, model, trim, year, condition, body, fuel, transmission, driveline, colour and status, with price, mileage and year ranges."
            }
            Skill::InventorySearch => {
                "Vehicles for sale, filtered, sorted and paged. Sold units are never listed; every listing carries status and updated_at; price is the advertised price including every mandatory dealer charge."
            }
            Skill::InventoryVehicle => {
                "One vehicle by VIN, stock number or vehicle_id, with every field the dealership's system has."
            }
            Skill::LeadSubmit => {
                "Submit a consented customer lead (optionally a vehicle of interest, a trade-in and an appointment request) to the dealership's CRM. Appointments are requested or proposed, never confirmed here."
            }
        }
    }

    pub fn tags(self) -> &'static [&'static str] {
        match self {
            Skill::DealerInformation => &["dealer", "dealership", "hours", "contact", "automotive"],
            Skill::InventoryFacets => &["inventory", "facets", "vehicles", "automotive"],
            Skill::InventorySearch => &["inventory", "search", "vehicles", "automotive"],
            Skill::InventoryVehicle => &["inventory", "vehicle", "detail", "automotive"],
            Skill::LeadSubmit => &["lead", "consent", "appointment", "automotive"],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_types_name_their_skill() {
        for skill in Skill::ALL {
            assert_eq!(
                Skill::from_request_type(&format!("{}.request", skill.id())),
                Some(skill)
            );
        }
        assert_eq!(Skill::from_request_type("inventory.search.response"), None);
        assert_eq!(Skill::from_request_type("inventory.request"), None);
        assert_eq!(
            Skill::InventoryVehicle.response_media_type(),
            "application/vnd.autoagent.vehicle-detail-response+json"
        );
    }
}
