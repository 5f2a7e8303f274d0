//! A program's effect table as it is stored (the compiled-policy cache): only the rows its set
//! added after the built-in ones, which the binary reading it already holds.

use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::{EffectRow, EffectTable};

pub fn serialize<S: Serializer>(
    table: &Arc<EffectTable>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    table.own_rows().serialize(serializer)
}

pub fn deserialize<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Arc<EffectTable>, D::Error> {
    Ok(EffectTable::extended(Vec::<EffectRow>::deserialize(
        deserializer,
    )?))
}
