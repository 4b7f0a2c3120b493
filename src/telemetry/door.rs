//! Which front door a call came in by. Both doors run the same pipeline, so
//! without this an operator could not tell a buyer agent's AAP traffic from
//! an MCP host's in the audit trail or the metrics.

use std::fmt;

/// The protocol a call arrived over.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Door {
    /// MCP, over HTTP or stdio.
    Mcp,
    /// The Auto Agent Protocol over A2A (`/aap/<dealership>`).
    Aap,
    /// The integration kit's in-process bridge (`dms-bridge kit …`).
    Kit,
}

impl Door {
    pub const ALL: [Door; 3] = [Door::Mcp, Door::Aap, Door::Kit];

    /// The name in audit rows, metric labels and `dms-bridge audit --door`.
    pub fn as_str(self) -> &'static str {
        match self {
            Door::Mcp => "mcp",
            Door::Aap => "aap",
            Door::Kit => "kit",
        }
    }

    /// The door named `name` (as [`Door::as_str`] writes it).
    pub fn from_name(name: &str) -> Option<Door> {
        Door::ALL.into_iter().find(|d| d.as_str() == name)
    }
}

impl fmt::Display for Door {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_read_back_as_their_door() {
        for door in Door::ALL {
            assert_eq!(Door::from_name(door.as_str()), Some(door));
            assert_eq!(serde_json::to_value(door).unwrap(), door.as_str());
        }
        assert_eq!(Door::from_name("MCP"), None);
        assert_eq!(Door::from_name(""), None);
    }
}
