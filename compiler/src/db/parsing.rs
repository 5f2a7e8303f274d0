//! The parse queries: a file is split into pieces (see [`crate::parser::pieces`]), each parsed and
//! remembered by its own text, so an edit re-parses the piece it touched and copies no rule.

use std::sync::Arc;

use salsa::Accumulator;

use super::{Diagnostics, SourceFile};
use crate::ast::{Item, PolicyFile, Relocate};
use crate::diagnostics::Diagnostic;

/// A parsed file: its pieces, and its outline (the header, declarations and tests, placed in the
/// file). Rules stay in their pieces. Equal only when the text is equal, so a moved node is never
/// served stale.
#[derive(Debug)]
pub struct Parsed {
    text: String,
    pub pieces: Vec<ParsedPiece>,
    pub outline: PolicyFile,
    /// Whether some item did not parse (so its uses of declarations are unknown).
    pub broken: bool,
}

impl PartialEq for Parsed {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text
    }
}

impl Eq for Parsed {}

/// One piece of a file: its syntax tree with positions relative to `offset`. A file that does not
/// parse piece by piece is one piece at offset 0.
#[derive(Clone, Debug)]
pub struct ParsedPiece {
    pub offset: u32,
    pub ast: Arc<PolicyFile>,
}

impl Parsed {
    /// The whole syntax tree, placed in the file (a copy).
    pub fn file(&self) -> PolicyFile {
        let mut file = PolicyFile {
            header: self.outline.header.clone(),
            items: Vec::new(),
        };
        for piece in &self.pieces {
            for item in &piece.ast.items {
                let mut item = item.clone();
                item.relocate(0, piece.offset);
                file.items.push(item);
            }
        }
        file
    }
}

#[salsa::tracked(returns(ref))]
pub fn parse(db: &dyn salsa::Database, file: SourceFile) -> Parsed {
    let path = file.path(db);
    let text = file.text(db);
    let (pieces, diagnostics) = by_pieces(db, path, file).unwrap_or_else(|| {
        let (ast, diagnostics) = crate::parser::parse_file(path, text);
        let whole = ParsedPiece {
            offset: 0,
            ast: Arc::new(ast),
        };
        (vec![whole], diagnostics)
    });
    let broken = diagnostics.iter().any(Diagnostic::is_error);
    for diagnostic in diagnostics {
        Diagnostics(diagnostic).accumulate(db);
    }
    let mut outline = PolicyFile::default();
    for piece in &pieces {
        if let Some(header) = &piece.ast.header {
            let mut header = header.clone();
            header.relocate(0, piece.offset);
            outline.header = Some(header);
        }
        for item in &piece.ast.items {
            if !matches!(item, Item::Rule(_)) {
                let mut item = item.clone();
                item.relocate(0, piece.offset);
                outline.items.push(item);
            }
        }
    }
    Parsed {
        text: text.clone(),
        pieces,
        outline,
        broken,
    }
}

/// The file's pieces, each parsed on its own; `None` when one does not parse on its own (or a
/// header is not first), so the whole file must be parsed.
fn by_pieces(
    db: &dyn salsa::Database,
    path: &str,
    file: SourceFile,
) -> Option<(Vec<ParsedPiece>, Vec<Diagnostic>)> {
    let mut pieces = Vec::new();
    let mut diagnostics = Vec::new();
    for &(offset, piece) in split(db, file).as_ref()? {
        let (ast, piece_diagnostics) = parse_piece(db, piece).as_ref()?;
        if ast.header.is_some() && offset > 0 {
            return None;
        }
        pieces.push(ParsedPiece {
            offset,
            ast: ast.clone(),
        });
        diagnostics.extend(piece_diagnostics.iter().map(|d| d.placed(path, offset)));
    }
    Some((pieces, diagnostics))
}

/// The file's pieces (see [`crate::parser::pieces`]), each with its offset; `None` when an
/// offset does not fit in 32 bits.
#[salsa::tracked(returns(ref))]
fn split(db: &dyn salsa::Database, file: SourceFile) -> Option<Vec<(u32, Piece<'_>)>> {
    let (path, text) = (file.path(db), file.text(db));
    crate::parser::pieces(text)
        .map(|range| {
            let offset = u32::try_from(range.start).ok()?;
            let piece = Piece::new(db, path.clone(), text.get(range)?.to_string());
            Some((offset, piece))
        })
        .collect()
}

/// Parses the pieces of `files` on every core, before [`parse`] asks for them one by one: pieces
/// are independent, and parsing is the largest part of loading a large set.
pub fn parse_pieces_in_parallel(db: &super::Database, files: &[SourceFile]) {
    let pieces: Vec<Piece<'_>> = files
        .iter()
        .filter_map(|file| split(db, *file).as_ref())
        .flatten()
        .map(|&(_, piece)| piece)
        .collect();
    super::parallel::on_every_core(db, &pieces, |db, piece| {
        parse_piece(db, piece);
    });
}

/// A piece of a file's text.
#[salsa::interned]
struct Piece<'db> {
    #[returns(ref)]
    path: String,
    #[returns(ref)]
    text: String,
}

/// One piece, parsed with positions relative to its start.
#[salsa::tracked(returns(ref), no_eq)]
fn parse_piece<'db>(
    db: &'db dyn salsa::Database,
    piece: Piece<'db>,
) -> Option<(Arc<PolicyFile>, Vec<Diagnostic>)> {
    crate::parser::parse_piece(piece.path(db), piece.text(db))
        .map(|(ast, diagnostics)| (Arc::new(ast), diagnostics))
}
