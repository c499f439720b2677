//! What a kept file looks like opened in the page, read from its vault only as far as
//! the preview needs: a table's first rows, a text's beginning, a notebook's cells. HTML
//! and PDF are not read here: they open in a frame from the preview origin.

use lens_types::{FilePreview, NotebookCell, NotebookOutput, PreviewAs, TextSyntax};

use super::vault::{Vault, VaultError, VaultReader};

/// Rows of a table shown, after its header.
pub const TABLE_ROWS: usize = 1_000;
/// A table's columns shown, and a cell's characters.
const TABLE_COLUMNS: usize = 100;
const CELL_CHARS: usize = 500;
/// Bytes of a table read at most for its first rows (long rows: fewer are shown).
const TABLE_BYTES: usize = 8 * 1024 * 1024;
/// Bytes of a text shown.
pub const TEXT_BYTES: usize = 512 * 1024;
/// The largest notebook opened in the page (its images are in it).
pub const NOTEBOOK_BYTES: usize = 20 * 1024 * 1024;

/// The `Content-Type` the preview origin serves a framed file with (by how it opens:
/// `PreviewAs::of`, the page's rule too).
pub fn frame_type(kind: Option<PreviewAs>) -> Option<&'static str> {
    match kind {
        Some(PreviewAs::Html) => Some("text/html; charset=utf-8"),
        Some(PreviewAs::Pdf) => Some("application/pdf"),
        _ => None,
    }
}

/// The file's first bytes, at least `want` of them where it has that many (whole chunks:
/// a little more), and whether that is the whole file.
pub async fn head(vault: &Vault, owner: &str, id: &str, want: usize) -> Result<(Vec<u8>, bool), VaultError> {
    let mut reader = vault.open(owner, id).await?;
    head_of(&mut reader, want, |_| false).await
}

/// Reads chunks until `want` bytes or `enough` says so; whether the file ended.
async fn head_of(
    reader: &mut VaultReader,
    want: usize,
    mut enough: impl FnMut(&[u8]) -> bool,
) -> Result<(Vec<u8>, bool), VaultError> {
    let mut bytes = Vec::new();
    while bytes.len() < want {
        match reader.next_chunk().await? {
            Some(chunk) => {
                let before = bytes.len();
                bytes.extend_from_slice(&chunk);
                if enough(&bytes[before..]) {
                    return Ok((bytes, false));
                }
            }
            None => return Ok((bytes, true)),
        }
    }
    // Exactly at the end counts as the whole file.
    let ended = reader.next_chunk().await?.is_none();
    Ok((bytes, ended))
}

/// A table's first rows: read until they are in (counting line ends, which a quoted
/// field may hold; then a few rows fewer are shown), never the whole of a large file.
pub async fn table(vault: &Vault, owner: &str, id: &str, delimiter: u8) -> Result<FilePreview, VaultError> {
    let mut reader = vault.open(owner, id).await?;
    let mut lines = 0;
    let (bytes, ended) = head_of(&mut reader, TABLE_BYTES, |new| {
        lines += new.iter().filter(|&&b| b == b'\n').count();
        lines > TABLE_ROWS + 1
    })
    .await?;
    Ok(table_of(&bytes, delimiter, ended))
}

/// The rows of `bytes` (a file's beginning, `ended` if the whole of it).
pub fn table_of(bytes: &[u8], delimiter: u8, ended: bool) -> FilePreview {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let mut reader =
        csv::ReaderBuilder::new().has_headers(false).flexible(true).delimiter(delimiter).from_reader(bytes);
    let mut rows: Vec<Vec<String>> = Vec::new();
    let mut record = csv::ByteRecord::new();
    let mut more = false;
    loop {
        match reader.read_byte_record(&mut record) {
            Ok(true) if rows.len() <= TABLE_ROWS => rows.push(
                record
                    .iter()
                    .take(TABLE_COLUMNS)
                    .map(|cell| String::from_utf8_lossy(cell).chars().take(CELL_CHARS).collect())
                    .collect(),
            ),
            Ok(true) => {
                more = true;
                break;
            }
            Ok(false) | Err(_) => break,
        }
    }
    // The last row read of an unfinished file may be cut in the middle.
    if !ended && !more {
        rows.pop();
    }
    FilePreview::Table { complete: ended && !more, rows }
}

/// A text's beginning, cut on a character.
pub fn text_of(bytes: &[u8], syntax: TextSyntax, ended: bool) -> FilePreview {
    let cut = !ended || bytes.len() > TEXT_BYTES;
    let mut shown = &bytes[..bytes.len().min(TEXT_BYTES)];
    // Leave out a character the cut split (at most 3 bytes of one).
    if cut {
        for back in 0..4.min(shown.len()) {
            if std::str::from_utf8(&shown[..shown.len() - back]).is_ok() {
                shown = &shown[..shown.len() - back];
                break;
            }
        }
    }
    FilePreview::Text { syntax, text: String::from_utf8_lossy(shown).into_owned(), cut }
}

/// A notebook's cells, or why they cannot be shown.
pub fn notebook_of(bytes: &[u8], ended: bool) -> FilePreview {
    let unavailable = |reason: &str| FilePreview::Unavailable { reason: reason.to_owned() };
    if !ended {
        return unavailable("this notebook is larger than 20 MB, too large to open here; download it");
    }
    let Ok(doc) = serde_json::from_slice::<serde_json::Value>(bytes) else {
        return unavailable("this is not a notebook Lens can read (it is not JSON)");
    };
    let Some(cells) = doc.get("cells").and_then(|c| c.as_array()) else {
        return unavailable("this is not a notebook Lens can read (it has no cells)");
    };
    let cells = cells
        .iter()
        .map(|cell| NotebookCell {
            cell_type: cell.get("cell_type").and_then(|t| t.as_str()).unwrap_or("raw").to_owned(),
            source: joined(cell.get("source")),
            outputs: cell.get("outputs").and_then(|o| o.as_array()).map(|o| outputs(o)).unwrap_or_default(),
        })
        .collect();
    FilePreview::Notebook { cells }
}

/// nbformat's multi-line strings: one string, or a list of lines.
fn joined(value: Option<&serde_json::Value>) -> String {
    match value {
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(serde_json::Value::Array(lines)) => lines.iter().filter_map(|l| l.as_str()).collect(),
        _ => String::new(),
    }
}

fn outputs(outputs: &[serde_json::Value]) -> Vec<NotebookOutput> {
    let mut shown = Vec::new();
    for output in outputs {
        match output.get("output_type").and_then(|t| t.as_str()) {
            Some("stream") => shown.push(NotebookOutput::Text {
                stream: output.get("name").and_then(|n| n.as_str()).unwrap_or("stdout").to_owned(),
                text: joined(output.get("text")),
            }),
            Some("execute_result" | "display_data") => {
                let data = output.get("data");
                let image = ["image/png", "image/jpeg"]
                    .into_iter()
                    .find_map(|mime| data.and_then(|d| d.get(mime)).map(|b| (mime, joined(Some(b)))));
                match image {
                    Some((mime, base64)) => shown.push(NotebookOutput::Image {
                        mime: mime.to_owned(),
                        base64: base64.split_whitespace().collect(),
                    }),
                    None => shown.push(NotebookOutput::Text {
                        stream: "result".into(),
                        text: joined(data.and_then(|d| d.get("text/plain"))),
                    }),
                }
            }
            Some("error") => {
                let lines = output.get("traceback").and_then(|t| t.as_array()).cloned().unwrap_or_default();
                let text: Vec<String> = lines.iter().filter_map(|l| l.as_str()).map(without_colours).collect();
                shown.push(NotebookOutput::Text { stream: "error".into(), text: text.join("\n") });
            }
            _ => {}
        }
    }
    shown
}

/// A traceback line without its terminal colour codes (`ESC [ … m`).
fn without_colours(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for d in chars.by_ref() {
                if d.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Rows a table file has: records end at line ends outside quotes, and a last line
/// without one counts too. The whole file is read, a chunk at a time.
pub async fn count_rows(vault: &Vault, owner: &str, id: &str) -> Result<u64, VaultError> {
    let mut reader = vault.open(owner, id).await?;
    let mut counter = RowCounter::default();
    while let Some(chunk) = reader.next_chunk().await? {
        counter.feed(&chunk);
    }
    Ok(counter.rows())
}

/// Counts records across chunks.
#[derive(Default)]
pub struct RowCounter {
    ends: u64,
    quoted: bool,
    /// Whether bytes came after the last line end.
    open: bool,
}

impl RowCounter {
    pub fn feed(&mut self, bytes: &[u8]) {
        for &b in bytes {
            match b {
                b'"' => self.quoted = !self.quoted,
                b'\n' if !self.quoted => {
                    self.ends += 1;
                    self.open = false;
                    continue;
                }
                _ => {}
            }
            self.open = true;
        }
    }

    pub fn rows(&self) -> u64 {
        self.ends + u64::from(self.open)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_shows_its_first_thousand_rows_quoted_fields_whole() {
        let mut csv = String::from("name,note\n");
        for i in 0..1_500 {
            csv.push_str(&format!("row{i},\"a, \"\"quoted\"\"\nnote\"\n"));
        }
        let FilePreview::Table { rows, complete } = table_of(csv.as_bytes(), b',', true) else { panic!() };
        assert_eq!(rows.len(), TABLE_ROWS + 1);
        assert!(!complete);
        assert_eq!(rows[0], ["name", "note"]);
        assert_eq!(rows[1], ["row0", "a, \"quoted\"\nnote"]);
        let FilePreview::Table { rows, complete } = table_of(b"\xEF\xBB\xBFa\tb\n1\t2", b'\t', true) else { panic!() };
        assert!(complete);
        assert_eq!(rows, [["a", "b"], ["1", "2"]]);
        // An unfinished file's last row may be cut: it is left out.
        let FilePreview::Table { rows, .. } = table_of(b"a,b\n1,2\n3,4", b',', false) else { panic!() };
        assert_eq!(rows, [["a", "b"], ["1", "2"]]);
    }

    #[test]
    fn rows_are_counted_across_chunks_with_line_ends_in_quotes() {
        let mut counter = RowCounter::default();
        counter.feed(b"a,b\n\"x\n");
        counter.feed(b"y\",2\n3,4");
        assert_eq!(counter.rows(), 3);
        let mut ended = RowCounter::default();
        ended.feed(b"a\nb\n");
        assert_eq!(ended.rows(), 2);
        assert_eq!(RowCounter::default().rows(), 0);
    }

    #[test]
    fn a_long_text_is_cut_on_a_character() {
        let text = "é".repeat(TEXT_BYTES);
        let FilePreview::Text { text: shown, cut, .. } = text_of(text.as_bytes(), TextSyntax::Plain, true) else {
            panic!()
        };
        assert!(cut);
        assert_eq!(shown.len(), TEXT_BYTES);
        assert!(!shown.contains('\u{fffd}'));
        let FilePreview::Text { cut, .. } = text_of(b"{}", TextSyntax::Json, true) else { panic!() };
        assert!(!cut);
    }

    #[test]
    fn a_notebook_shows_its_cells_outputs_and_plain_tracebacks() {
        let nb = serde_json::json!({
            "nbformat": 4, "nbformat_minor": 5, "metadata": {},
            "cells": [
                {"cell_type": "markdown", "metadata": {}, "source": ["# Title\n", "text"]},
                {"cell_type": "code", "metadata": {}, "execution_count": 1, "source": "print(1)\n1/0",
                 "outputs": [
                    {"output_type": "stream", "name": "stdout", "text": ["1\n"]},
                    {"output_type": "display_data", "metadata": {}, "data": {"image/png": "iVBO\nRw==", "text/plain": "<Figure>"}},
                    {"output_type": "error", "ename": "ZeroDivisionError", "evalue": "division by zero",
                     "traceback": ["\u{1b}[0;31mZeroDivisionError\u{1b}[0m: division by zero"]}
                 ]}
            ]
        });
        let FilePreview::Notebook { cells } = notebook_of(nb.to_string().as_bytes(), true) else { panic!() };
        assert_eq!(cells[0].source, "# Title\ntext");
        assert_eq!(
            cells[1].outputs,
            [
                NotebookOutput::Text { stream: "stdout".into(), text: "1\n".into() },
                NotebookOutput::Image { mime: "image/png".into(), base64: "iVBORw==".into() },
                NotebookOutput::Text { stream: "error".into(), text: "ZeroDivisionError: division by zero".into() },
            ]
        );
        assert!(matches!(notebook_of(b"nope", true), FilePreview::Unavailable { .. }));
    }
}
