//! A program's effect table as it is stored (the compiled-policy cache): only the rows its set
//! added after the built-in ones, which the binary reading it already holds.

use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::{EffectRow, EffectTable};

pub fn serialize<S: Serializer>(
    table: &Arc<EffectTable>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    let built_in = EffectTable::built_in();
    let rows = table.rows();
    // Every table a set makes starts with the built-in rows; one that does not could not be
    // read back as it was, so it is not stored.
    let own = rows.strip_prefix(built_in.rows()).ok_or_else(|| {
        serde::ser::Error::custom("an effect table without the built-in rows in front")
    })?;
    own.serialize(serializer)
}

pub fn deserialize<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Arc<EffectTable>, D::Error> {
    Ok(EffectTable::extended(Vec::<EffectRow>::deserialize(
        deserializer,
    )?))
}
