//! The developer settings: which provider keys are set, and the change to them.

use booktr_core::developer as domain;
use serde::{Deserialize, Deserializer};

use super::{present, wire, Mirror};

wire! {
    /// The spec's DeveloperSettings: which keys are set, masked.
    #[serde(rename_all = "camelCase")]
    pub struct DeveloperSettings from domain::DeveloperSettings {
        pub has_key_one: bool,
        pub has_key_two: bool,
        pub has_key_three: bool,
        pub key_one_preview: Option<String>,
        pub key_two_preview: Option<String>,
        pub key_three_preview: Option<String>,
    }
}

/// `PATCH /api/settings/developer`: a field left out is unchanged, `null` removes the key, a
/// string sets it. Unknown fields are refused, and so is anything but a JSON object.
#[derive(utoipa::ToSchema)]
#[schema(rename_all = "camelCase")]
pub struct DeveloperPatch {
    #[schema(value_type = Option<String>)]
    key_one: Option<Option<String>>,
    #[schema(value_type = Option<String>)]
    key_two: Option<Option<String>>,
    #[schema(value_type = Option<String>)]
    key_three: Option<Option<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct PatchFields {
    #[serde(default, deserialize_with = "present")]
    key_one: Option<Option<String>>,
    #[serde(default, deserialize_with = "present")]
    key_two: Option<Option<String>>,
    #[serde(default, deserialize_with = "present")]
    key_three: Option<Option<String>>,
}

impl<'de> Deserialize<'de> for DeveloperPatch {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        // Through a map first: a derived struct also takes an array of its fields in order,
        // which would set keys by position from `["sk-..."]`.
        let fields = serde_json::Map::<String, serde_json::Value>::deserialize(deserializer)?;
        let fields: PatchFields = serde_json::from_value(serde_json::Value::Object(fields))
            .map_err(serde::de::Error::custom)?;
        Ok(DeveloperPatch {
            key_one: fields.key_one,
            key_two: fields.key_two,
            key_three: fields.key_three,
        })
    }
}

impl Mirror<DeveloperPatch> for domain::DeveloperPatch {
    fn mirror(from: DeveloperPatch) -> Self {
        domain::DeveloperPatch {
            key_one: from.key_one,
            key_two: from.key_two,
            key_three: from.key_three,
        }
    }
}

impl From<DeveloperPatch> for domain::DeveloperPatch {
    fn from(from: DeveloperPatch) -> Self {
        Mirror::mirror(from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_patch_is_an_object_of_known_fields_telling_null_from_absent() {
        let patch: DeveloperPatch =
            serde_json::from_str(r#"{"keyOne": "sk-x", "keyTwo": null}"#).unwrap();
        assert_eq!(patch.key_one, Some(Some("sk-x".into())));
        assert_eq!(patch.key_two, Some(None));
        assert_eq!(patch.key_three, None);
        for refused in [
            r#"["sk-x"]"#,
            r#"{"keyFour": "sk-x"}"#,
            r#"{"keyOne": 5}"#,
            r#""sk-x""#,
        ] {
            assert!(
                serde_json::from_str::<DeveloperPatch>(refused).is_err(),
                "{refused}"
            );
        }
    }
}
