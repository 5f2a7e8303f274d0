//! Tool declarations taken from JSON Schema: the same schema a host hands the model.

use std::sync::Arc;

use serde_json::Value;

use super::rules::SourceUnit;
use super::{Record, Ty};

/// Schemas nest at most this deep; deeper parts are typed `any`.
const MAX_DEPTH: usize = 32;

/// Where the schema that `file` names as `relative` is: relative to the file's folder.
pub fn schema_key(file: &str, relative: &str) -> String {
    if relative.starts_with('/') {
        return relative.to_string();
    }
    match file.rfind('/') {
        Some(i) => format!("{}/{relative}", file.get(..i).unwrap_or("")),
        None => relative.to_string(),
    }
}

pub(crate) fn load(unit: &SourceUnit<'_>, relative: &str) -> Result<Record, String> {
    let key = schema_key(unit.path, relative);
    let text = unit
        .schemas
        .get(&key)
        .cloned()
        .unwrap_or_else(|| Err(format!("`{key}` was not loaded")))?;
    let json: Value =
        serde_json::from_str(&text).map_err(|e| format!("`{relative}` is not JSON ({e})"))?;
    let schema = json
        .get("inputSchema")
        .or_else(|| json.get("input_schema"))
        .or_else(|| json.get("parameters"))
        .unwrap_or(&json);
    match to_type(schema, 0) {
        Ty::Record(record) => Ok(Arc::unwrap_or_clone(record)),
        other => Err(format!(
            "`{relative}` describes `{other}`, not an object of arguments"
        )),
    }
}

fn to_type(schema: &Value, depth: usize) -> Ty {
    if depth > MAX_DEPTH {
        return Ty::Json;
    }
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        let strings: Option<Vec<String>> = values
            .iter()
            .map(|v| v.as_str().map(str::to_string))
            .collect();
        return strings.map_or(Ty::Json, |s| Ty::Enum(s.into()));
    }
    let kind = match schema.get("type") {
        Some(Value::String(kind)) => kind.as_str(),
        Some(Value::Array(kinds)) => {
            let non_null: Vec<&str> = kinds
                .iter()
                .filter_map(Value::as_str)
                .filter(|k| *k != "null")
                .collect();
            return match non_null.as_slice() {
                [one] => to_type(&with_type(schema, one), depth).optional(),
                _ => Ty::Json,
            };
        }
        _ if schema.get("properties").is_some() => "object",
        _ => return Ty::Json,
    };
    match kind {
        "string" => Ty::Str,
        "integer" => Ty::Int,
        "number" => Ty::Float,
        "boolean" => Ty::Bool,
        "array" => Ty::List(Arc::new(
            schema
                .get("items")
                .map_or(Ty::Json, |items| to_type(items, depth + 1)),
        )),
        "object" => {
            let required: Vec<&str> = schema
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let fields = schema
                .get("properties")
                .and_then(Value::as_object)
                .map(|props| {
                    props
                        .iter()
                        .map(|(name, prop)| {
                            let ty = to_type(prop, depth + 1);
                            let ty = if required.contains(&name.as_str()) {
                                ty
                            } else {
                                ty.optional()
                            };
                            (name.clone(), ty)
                        })
                        .collect()
                })
                .unwrap_or_default();
            Ty::Record(Arc::new(Record { fields }))
        }
        _ => Ty::Json,
    }
}

fn with_type(schema: &Value, kind: &str) -> Value {
    let mut copy = schema.clone();
    if let Some(object) = copy.as_object_mut() {
        object.insert("type".into(), Value::String(kind.into()));
    }
    copy
}

#[cfg(test)]
mod tests {
    use super::to_type;
    use crate::check::Ty;
    use std::sync::Arc;

    #[test]
    fn required_fields_are_plain_and_others_optional() {
        let schema = serde_json::json!({
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "mode": {"enum": ["a", "b"]},
                "n": {"type": ["integer", "null"]},
                "tags": {"type": "array", "items": {"type": "string"}}
            },
            "required": ["path", "mode"]
        });
        let Ty::Record(record) = to_type(&schema, 0) else {
            panic!("not a record")
        };
        assert_eq!(record.get("path"), Some(&Ty::Str));
        assert!(matches!(record.get("mode"), Some(Ty::Enum(_))));
        assert_eq!(record.get("n"), Some(&Ty::Int.optional()));
        assert_eq!(
            record.get("tags"),
            Some(&Ty::List(Arc::new(Ty::Str)).optional())
        );
    }
}
