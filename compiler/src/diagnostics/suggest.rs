//! "Did you mean" from fuzzy matching.

/// The candidate closest to `name`, if one is close enough to be a plausible typo.
pub fn did_you_mean<'a>(
    name: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    candidates
        .into_iter()
        .filter(|c| *c != name)
        .map(|c| (strsim::jaro_winkler(name, c), c))
        .filter(|(score, _)| *score >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c)
}

/// ` (did you mean `x`?)`-style help, or the fallback.
pub fn help_with_suggestion(suggestion: Option<&str>, fallback: String) -> String {
    match suggestion {
        Some(s) => format!("did you mean `{s}`?"),
        None => fallback,
    }
}

#[cfg(test)]
mod tests {
    use super::did_you_mean;

    #[test]
    fn suggests_close_names_only() {
        assert_eq!(
            did_you_mean("wirte_file", ["write_file", "bash"]),
            Some("write_file")
        );
        assert_eq!(did_you_mean("zzz", ["write_file", "bash"]), None);
    }
}
