//! A rule's nodes. Lowering builds them; a program read back from the compiled-policy cache
//! keeps each rule's nodes as the bytes they were stored as, and decodes them the first time
//! something reads them. A hook process judges one call and runs a few of the default chain's
//! rules (most are ruled out by field scans and part guards, which are stored beside the
//! program: `scan::ProgramIndex`), and reading back every rule's nodes was most of its time.

use std::fmt;
use std::sync::{Arc, OnceLock};

use serde::de::{Error as _, Visitor};
use serde::ser::Error as _;
use serde::{Deserializer, Serializer};

use super::Node;
use super::stored_types;
use crate::check::Ty;

#[derive(Clone, Default)]
pub struct Nodes {
    decoded: OnceLock<Vec<Node>>,
    /// Where a read-back rule's nodes come from until they are decoded.
    stored: Option<Arc<Stored>>,
}

/// A rule's nodes as stored, with the type table they name their types in.
struct Stored {
    bytes: Box<[u8]>,
    types: Arc<[Ty]>,
}

impl Nodes {
    /// The stored nodes decoded; none for a rule that has neither.
    fn decode_stored(&self) -> Vec<Node> {
        self.stored
            .as_deref()
            .map(Stored::decode)
            .unwrap_or_default()
    }
}

impl Stored {
    /// The nodes, or none when the bytes do not decode. The file they came from passed its
    /// checksum, so that is a program no compiler wrote; with no nodes, every rule that reads
    /// one faults, and a fault fails closed.
    fn decode(&self) -> Vec<Node> {
        stored_types::read_with(Arc::clone(&self.types), || {
            postcard::from_bytes::<Vec<Node>>(&self.bytes)
        })
        .unwrap_or_default()
    }
}

impl Nodes {
    pub fn as_slice(&self) -> &[Node] {
        self.decoded.get_or_init(|| self.decode_stored())
    }

    pub fn get(&self, index: usize) -> Option<&Node> {
        self.as_slice().get(index)
    }

    pub fn iter(&self) -> std::slice::Iter<'_, Node> {
        self.as_slice().iter()
    }

    pub fn into_vec(mut self) -> Vec<Node> {
        match self.decoded.take() {
            Some(nodes) => nodes,
            None => self.decode_stored(),
        }
    }
}

impl From<Vec<Node>> for Nodes {
    fn from(nodes: Vec<Node>) -> Nodes {
        Nodes {
            decoded: OnceLock::from(nodes),
            stored: None,
        }
    }
}

impl<'n> IntoIterator for &'n Nodes {
    type Item = &'n Node;
    type IntoIter = std::slice::Iter<'n, Node>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl fmt::Debug for Nodes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.as_slice()).finish()
    }
}

/// Writes the nodes as one sequence of bytes (their own postcard encoding, types by number in
/// the table of the program being written), so that a reader can keep them unread.
pub fn serialize<S: Serializer>(nodes: &Nodes, serializer: S) -> Result<S::Ok, S::Error> {
    let bytes = postcard::to_stdvec(nodes.as_slice()).map_err(S::Error::custom)?;
    serializer.serialize_bytes(&bytes)
}

/// Keeps the bytes, and the type table of the program being read, for the first read.
pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Nodes, D::Error> {
    struct Bytes;
    impl Visitor<'_> for Bytes {
        type Value = Box<[u8]>;

        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a rule's nodes as bytes")
        }

        fn visit_bytes<E: serde::de::Error>(self, bytes: &[u8]) -> Result<Box<[u8]>, E> {
            Ok(bytes.into())
        }
    }
    let bytes = deserializer.deserialize_bytes(Bytes)?;
    let types = stored_types::types_read().ok_or_else(|| {
        D::Error::custom("a rule's nodes are read only with a table (stored_types::read_with)")
    })?;
    Ok(Nodes {
        decoded: OnceLock::new(),
        stored: Some(Arc::new(Stored { bytes, types })),
    })
}
