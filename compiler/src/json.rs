//! JSON read strictly. A host whose JSON library keeps the first of two equal keys would run
//! what Sluice never judged (`{"command":"rm -rf /","command":"ls"}`: serde_json keeps the
//! last), so an object with a repeated key is an error, never a guess.

use std::fmt;

use serde::de::{DeserializeSeed, Error as _, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

/// Parses `text` as JSON, refusing an object that repeats a key (at any depth).
pub fn from_str(text: &str) -> Result<Value, serde_json::Error> {
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let value = Strict.deserialize(&mut deserializer)?;
    deserializer.end()?;
    Ok(value)
}

struct Strict;

impl<'de> DeserializeSeed<'de> for Strict {
    type Value = Value;

    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(StrictVisitor)
    }
}

struct StrictVisitor;

impl<'de> Visitor<'de> for StrictVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Value, E> {
        Number::from_f64(v)
            .map(Value::Number)
            .ok_or_else(|| E::custom("a number JSON cannot hold"))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        Strict.deserialize(d)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1024));
        while let Some(item) = seq.next_element_seed(Strict)? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut object = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if object.contains_key(&key) {
                return Err(A::Error::custom(format_args!(
                    "the key `{key}` appears twice in one object"
                )));
            }
            let value = map.next_value_seed(Strict)?;
            object.insert(key, value);
        }
        Ok(Value::Object(object))
    }
}

/// One step into a JSON value: an object's key or a list's index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step<'a> {
    Key(&'a str),
    Index(usize),
}

/// Where in `text` (valid JSON) the value at `path` starts, or with `key` set, where the key of
/// its last step starts: a byte offset, for errors that name a line and column.
pub fn locate(text: &str, path: &[Step<'_>], key: bool) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut at = skip_space(bytes, 0);
    for (n, step) in path.iter().enumerate() {
        let last = n + 1 == path.len();
        match *step {
            Step::Key(wanted) => {
                if bytes.get(at) != Some(&b'{') {
                    return None;
                }
                at = skip_space(bytes, at + 1);
                loop {
                    let start = at;
                    let end = skip_string(bytes, start)?;
                    let name: String = serde_json::from_str(text.get(start..end)?).ok()?;
                    at = skip_space(bytes, end);
                    if bytes.get(at) != Some(&b':') {
                        return None;
                    }
                    at = skip_space(bytes, at + 1);
                    if name == wanted {
                        if last && key {
                            return Some(start);
                        }
                        break;
                    }
                    at = skip_space(bytes, skip_value(bytes, at)?);
                    match bytes.get(at) {
                        Some(b',') => at = skip_space(bytes, at + 1),
                        _ => return None,
                    }
                }
            }
            Step::Index(wanted) => {
                if bytes.get(at) != Some(&b'[') {
                    return None;
                }
                at = skip_space(bytes, at + 1);
                for _ in 0..wanted {
                    at = skip_space(bytes, skip_value(bytes, at)?);
                    match bytes.get(at) {
                        Some(b',') => at = skip_space(bytes, at + 1),
                        _ => return None,
                    }
                }
            }
        }
    }
    Some(at)
}

/// The 1-based line and column (in characters) of a byte offset.
pub fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
    (line, column)
}

fn skip_space(bytes: &[u8], mut at: usize) -> usize {
    while bytes.get(at).is_some_and(|b| b" \t\r\n".contains(b)) {
        at += 1;
    }
    at
}

/// Past the string that starts at `at`.
fn skip_string(bytes: &[u8], at: usize) -> Option<usize> {
    if bytes.get(at) != Some(&b'"') {
        return None;
    }
    let mut i = at + 1;
    loop {
        match bytes.get(i)? {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
}

/// Past the value that starts at `at`, counting brackets outside strings (no recursion, so no
/// depth of nesting can overflow the stack).
fn skip_value(bytes: &[u8], at: usize) -> Option<usize> {
    match bytes.get(at)? {
        b'"' => skip_string(bytes, at),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut i = at;
            loop {
                match bytes.get(i)? {
                    b'"' => {
                        i = skip_string(bytes, i)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth = depth.checked_sub(1)?;
                        if depth == 0 {
                            return Some(i + 1);
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
        }
        _ => {
            let mut i = at;
            while bytes.get(i).is_some_and(|b| !b",}] \t\r\n".contains(b)) {
                i += 1;
            }
            (i > at).then_some(i)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Step, from_str, line_column, locate};

    #[test]
    fn locates_keys_and_values_by_path() {
        let text = "{\"tool\": \"bash\",\n \"agent\": {\"labels\": [\"a\", 7]},\n \"tol\": 1}";
        let at = |path: &[Step<'_>], key| locate(text, path, key).map(|o| line_column(text, o));
        assert_eq!(at(&[Step::Key("tool")], false), Some((1, 10)));
        assert_eq!(at(&[Step::Key("tol")], true), Some((3, 2)));
        let seven = [Step::Key("agent"), Step::Key("labels"), Step::Index(1)];
        assert_eq!(at(&seven, false), Some((2, 28)));
        assert_eq!(at(&[Step::Key("none")], true), None);
    }

    #[test]
    fn a_repeated_key_is_an_error_at_any_depth() {
        let top = from_str(r#"{"command":"rm -rf /","command":"ls"}"#).unwrap_err();
        assert!(
            top.to_string().contains("the key `command` appears twice"),
            "{top}"
        );
        assert_eq!((top.line(), top.column() > 0), (1, true));
        let deep = from_str(r#"{"args":{"a":[{"x":1,"x":2}]}}"#).unwrap_err();
        assert!(deep.to_string().contains("`x` appears twice"), "{deep}");
    }

    #[test]
    fn values_are_read_as_serde_json_reads_them() {
        let text = r#"{"a":[1,-2,3.5,true,null,"s",{"b":{}}],"c":"é\u00e9"}"#;
        assert_eq!(
            from_str(text).unwrap(),
            serde_json::from_str::<serde_json::Value>(text).unwrap()
        );
    }

    #[test]
    fn a_lone_surrogate_and_trailing_text_are_errors() {
        assert!(from_str(r#"{"a":"\ud800"}"#).is_err());
        assert!(from_str(r#"{"a":1} x"#).is_err());
    }

    #[test]
    fn deep_nesting_is_an_error_not_an_overflow() {
        let deep = "[".repeat(100_000);
        assert!(from_str(&deep).is_err());
    }
}
