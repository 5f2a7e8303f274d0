//! Reading the bash syntax tree: a node's children in one pass of a cursor, chains of one
//! operator flattened, assignments as words, and the grammar's misreading of `a && b 2>&1 | c`.

use tree_sitter::Node;

#[cfg(test)]
use super::grammar::STEPS;
use super::word::{Word, source, word};

/// The commands before the last of a `&&`/`||` list that the grammar put inside the first part
/// of a pipeline (`a && b 2>&1 | c` read as `(a && b 2>&1) | c`); empty when it did not.
pub(super) fn misread_list(part: Node<'_>) -> Vec<Node<'_>> {
    if part.kind() != "redirected_statement" {
        return Vec::new();
    }
    match part.child_by_field_name("body") {
        Some(body) if body.kind() == "list" => {
            let mut parts = flatten(body);
            parts.pop();
            parts
        }
        _ => Vec::new(),
    }
}

/// `NAME=VALUE` with the value after quote removal.
pub(super) fn word_of_assignment(node: Node<'_>, src: &str) -> Word {
    let name = node
        .child_by_field_name("name")
        .map_or("", |n| source(n, src));
    let value = node
        .child_by_field_name("value")
        .map(|v| word(v, src))
        .unwrap_or_default();
    Word {
        text: format!("{name}={}", value.text),
        dynamic: value.dynamic,
        glob: false,
        brace: false,
    }
}

/// The operands of a chain of one operator (`list` or `pipeline` nodes nested in each other), in
/// order, found without recursion.
pub(super) fn flatten(node: Node<'_>) -> Vec<Node<'_>> {
    let kind = node.kind();
    let mut parts = Vec::new();
    let mut stack = vec![node];
    while let Some(next) = stack.pop() {
        if next.kind() == kind {
            let children: Vec<Node<'_>> = named_children(next).collect();
            stack.extend(children.into_iter().rev());
        } else {
            parts.push(next);
        }
    }
    parts
}

/// A node's named children, in order.
pub(super) fn named_children(node: Node<'_>) -> impl Iterator<Item = Node<'_>> {
    fields(node)
        .into_iter()
        .filter_map(|(_, child)| child.is_named().then_some(child))
}

/// A node's children with their field names, in order, read in one pass of a cursor: fetching
/// a child by its index scans the children before it, so a loop over indices is quadratic in a
/// node's width, and a hostile line can make a node thousands of children wide.
pub(super) fn fields(node: Node<'_>) -> Vec<(Option<&str>, Node<'_>)> {
    let mut cursor = node.walk();
    let mut out = Vec::new();
    if cursor.goto_first_child() {
        loop {
            #[cfg(test)]
            STEPS.with(|steps| steps.set(steps.get() + 1));
            out.push((cursor.field_name(), cursor.node()));
            if !cursor.goto_next_sibling() {
                break;
            }
        }
    }
    out
}

/// Whether a `while` loop's condition is always true and its body puts a command in the
/// background.
pub(super) fn endless_spawning(node: Node<'_>, src: &str) -> bool {
    let condition = node
        .child_by_field_name("condition")
        .map(|c| {
            source(c, src)
                .trim()
                .trim_end_matches(';')
                .trim()
                .to_string()
        })
        .unwrap_or_default();
    if !matches!(
        condition.as_str(),
        ":" | "true" | "/bin/true" | "((1))" | "(( 1 ))" | "[ 1 ]" | "[[ 1 ]]" | "1"
    ) {
        return false;
    }
    let body = node
        .child_by_field_name("body")
        .map(|b| source(b, src))
        .unwrap_or("");
    let bytes = body.as_bytes();
    bytes.iter().enumerate().any(|(i, &b)| {
        b == b'&'
            && bytes.get(i + 1) != Some(&b'&')
            && bytes.get(i + 1) != Some(&b'>')
            && i.checked_sub(1)
                .and_then(|j| bytes.get(j))
                .is_none_or(|p| !matches!(p, b'&' | b'>' | b'<' | b'|'))
    })
}
