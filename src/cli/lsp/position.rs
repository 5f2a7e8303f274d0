//! Byte offsets in a document and LSP positions (lines and UTF-16 code units) of the same text.

use lsp_types::{Position, Range};

pub fn position(text: &str, offset: usize) -> Position {
    let offset = offset.min(text.len());
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count();
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let character = before
        .get(line_start..)
        .map_or(0, |s| s.encode_utf16().count());
    Position::new(
        u32::try_from(line).unwrap_or(u32::MAX),
        u32::try_from(character).unwrap_or(u32::MAX),
    )
}

pub fn range(text: &str, start: usize, end: usize) -> Range {
    Range::new(position(text, start), position(text, end))
}

/// The byte offset of a position; past the end of a line or the text, the end.
pub fn offset(text: &str, position: Position) -> usize {
    let mut line_start = 0;
    for _ in 0..position.line {
        match text.get(line_start..).and_then(|rest| rest.find('\n')) {
            Some(newline) => line_start += newline + 1,
            None => return text.len(),
        }
    }
    let line = text.get(line_start..).unwrap_or("");
    let line = line.split('\n').next().unwrap_or("");
    let mut units = 0u32;
    for (index, ch) in line.char_indices() {
        if units >= position.character {
            return line_start + index;
        }
        units += u32::try_from(ch.len_utf16()).unwrap_or(1);
    }
    line_start + line.len()
}
