//! A policy's globs, built on first use: a glob compiles to a regex, and a call runs only the
//! rules of its own tool. The pattern is what a program stores; the matcher is rebuilt from it.

use std::sync::OnceLock;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A glob of a rule's condition (`args.path glob "src/**"`): `*` stays within a path segment.
#[derive(Clone)]
pub struct PolicyGlob {
    pattern: String,
    matcher: OnceLock<Option<globset::GlobMatcher>>,
}

impl PolicyGlob {
    /// The glob, if `pattern` is one (lowering reports the error of one that is not).
    pub fn new(pattern: &str) -> Result<PolicyGlob, globset::Error> {
        let matcher = Self::build(pattern)?;
        Ok(PolicyGlob {
            pattern: pattern.to_string(),
            matcher: OnceLock::from(Some(matcher)),
        })
    }

    fn build(pattern: &str) -> Result<globset::GlobMatcher, globset::Error> {
        globset::GlobBuilder::new(pattern)
            .literal_separator(true)
            .build()
            .map(|glob| glob.compile_matcher())
    }

    pub fn as_str(&self) -> &str {
        &self.pattern
    }

    /// The matcher; `None` only for a pattern that is no glob, which a stored program could
    /// hold only if it was altered: the rule running it faults, and a fault denies.
    pub fn matcher(&self) -> Option<&globset::GlobMatcher> {
        self.matcher
            .get_or_init(|| Self::build(&self.pattern).ok())
            .as_ref()
    }
}

impl std::fmt::Debug for PolicyGlob {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("PolicyGlob").field(&self.pattern).finish()
    }
}

impl Serialize for PolicyGlob {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.pattern.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for PolicyGlob {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(PolicyGlob {
            pattern: String::deserialize(deserializer)?,
            matcher: OnceLock::new(),
        })
    }
}

/// The globs of a rule's tool selector (`on mcp__*`), matched against the called tool's name.
#[derive(Clone)]
pub struct ToolGlobs {
    patterns: Vec<String>,
    set: OnceLock<globset::GlobSet>,
}

impl ToolGlobs {
    pub fn new(patterns: Vec<String>) -> ToolGlobs {
        ToolGlobs {
            patterns,
            set: OnceLock::new(),
        }
    }

    /// Whether a glob matches `tool`. A pattern that is no glob (the checker rejects those)
    /// matches nothing.
    pub fn is_match(&self, tool: &str) -> bool {
        self.set
            .get_or_init(|| {
                let mut builder = globset::GlobSetBuilder::new();
                for pattern in &self.patterns {
                    if let Ok(glob) = globset::Glob::new(pattern) {
                        builder.add(glob);
                    }
                }
                builder
                    .build()
                    .unwrap_or_else(|_| globset::GlobSet::empty())
            })
            .is_match(tool)
    }
}

impl std::fmt::Debug for ToolGlobs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("ToolGlobs").field(&self.patterns).finish()
    }
}

impl Serialize for ToolGlobs {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.patterns.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for ToolGlobs {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(ToolGlobs::new(Vec::deserialize(deserializer)?))
    }
}
