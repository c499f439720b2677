//! Block Markdown: paragraphs, ATX and setext headings, fenced and indented code,
//! block quotes, nested lists (tight and loose), GitHub tables and thematic breaks.

use super::inline::{escape_into, render_into as inline};

/// Appends the blocks of `lines` as HTML; in a tight list item paragraphs lose their `<p>`.
pub fn render_into(out: &mut String, lines: &[String], tight: bool) {
    let mut i = 0;
    while i < lines.len() {
        let line = &lines[i];
        let (indent, t) = split_indent(line);
        i = if t.is_empty() {
            i + 1
        } else if indent >= 4 {
            indented_code(out, lines, i)
        } else if let Some(fence) = Fence::open(t) {
            fenced_code(out, lines, i, &fence, indent)
        } else if let Some((level, text)) = heading(t) {
            out.push_str(&format!("<h{level}>"));
            inline(out, text);
            out.push_str(&format!("</h{level}>\n"));
            i + 1
        } else if is_break(t) {
            out.push_str("<hr />\n");
            i + 1
        } else if t.starts_with('>') {
            quote(out, lines, i)
        } else if let Some(marker) = Marker::read(line) {
            list(out, lines, i, marker)
        } else if let Some(columns) = lines.get(i + 1).and_then(|next| table_columns(t, next)) {
            table(out, lines, i, &columns)
        } else {
            paragraph(out, lines, i, tight)
        };
    }
}

/// The width of `line`'s leading spaces and the rest.
fn split_indent(line: &str) -> (usize, &str) {
    let t = line.trim_start_matches(' ');
    (line.len() - t.len(), t)
}

/// `line` less up to `n` leading spaces.
fn dedent(line: &str, n: usize) -> &str {
    let spaces = line.len() - line.trim_start_matches(' ').len();
    &line[spaces.min(n)..]
}

fn heading(t: &str) -> Option<(usize, &str)> {
    let level = t.bytes().take_while(|&c| c == b'#').count();
    let rest = &t[level..];
    if !(1..=6).contains(&level) || !(rest.is_empty() || rest.starts_with([' ', '\t'])) {
        return None;
    }
    let rest = rest.trim();
    // A closing run of `#` goes, when a space stands before it.
    let closed = rest.trim_end_matches('#');
    let text = if closed.is_empty() || closed.ends_with(' ') { closed.trim_end() } else { rest };
    Some((level, text))
}

/// `---`, `***` or `___` (three or more, spaces allowed).
fn is_break(t: &str) -> bool {
    let Some(c) = t.chars().next().filter(|c| matches!(c, '-' | '*' | '_')) else { return false };
    t.chars().all(|x| x == c || x == ' ') && t.chars().filter(|&x| x == c).count() >= 3
}

/// Whether `line` ends the paragraph before it.
fn interrupts(line: &str) -> bool {
    let (indent, t) = split_indent(line);
    t.is_empty()
        || (indent < 4
            && (Fence::open(t).is_some()
                || heading(t).is_some()
                || is_break(t)
                || t.starts_with('>')
                || Marker::read(line).is_some_and(|m| !m.empty && m.start.is_none_or(|s| s == 1))))
}

struct Fence {
    ch: char,
    len: usize,
    info: String,
}

impl Fence {
    fn open(t: &str) -> Option<Fence> {
        let ch = t.chars().next().filter(|c| matches!(c, '`' | '~'))?;
        let len = t.chars().take_while(|&c| c == ch).count();
        let info = t[len..].trim();
        (len >= 3 && !(ch == '`' && info.contains('`'))).then(|| Fence { ch, len, info: info.to_string() })
    }

    fn closes(&self, line: &str) -> bool {
        let (indent, t) = split_indent(line);
        let len = t.chars().take_while(|&c| c == self.ch).count();
        indent < 4 && len >= self.len && t[len..].trim().is_empty()
    }
}

/// A fence's code, to its closing fence or (while an answer streams) to the end.
fn fenced_code(out: &mut String, lines: &[String], start: usize, fence: &Fence, indent: usize) -> usize {
    let language = fence.info.split_whitespace().next().unwrap_or("");
    if language.is_empty() {
        out.push_str("<pre><code>");
    } else {
        out.push_str("<pre><code class=\"language-");
        escape_into(out, language);
        out.push_str("\">");
    }
    let mut i = start + 1;
    while i < lines.len() && !fence.closes(&lines[i]) {
        escape_into(out, dedent(&lines[i], indent));
        out.push('\n');
        i += 1;
    }
    out.push_str("</code></pre>\n");
    i + 1
}

fn indented_code(out: &mut String, lines: &[String], start: usize) -> usize {
    let mut end = start;
    let mut i = start;
    while i < lines.len() {
        let (indent, t) = split_indent(&lines[i]);
        if !t.is_empty() && indent < 4 {
            break;
        }
        if !t.is_empty() {
            end = i + 1;
        }
        i += 1;
    }
    out.push_str("<pre><code>");
    for line in &lines[start..end] {
        escape_into(out, dedent(line, 4));
        out.push('\n');
    }
    out.push_str("</code></pre>\n");
    end
}

fn quote(out: &mut String, lines: &[String], start: usize) -> usize {
    let mut inner = Vec::new();
    let mut i = start;
    while i < lines.len() {
        let (indent, t) = split_indent(&lines[i]);
        match t.strip_prefix('>') {
            Some(rest) if indent < 4 => inner.push(rest.strip_prefix(' ').unwrap_or(rest).to_string()),
            // A lazy line continues the quote's paragraph.
            _ if !inner.last().is_none_or(|l: &String| l.trim().is_empty()) && !interrupts(&lines[i]) => {
                inner.push(t.to_string())
            }
            _ => break,
        }
        i += 1;
    }
    out.push_str("<blockquote>\n");
    render_into(out, &inner, false);
    out.push_str("</blockquote>\n");
    i
}

/// A list item's marker: `-`, `*`, `+`, or a number with `.` or `)`.
#[derive(Clone, Copy)]
struct Marker {
    /// The bullet or the delimiter after the number.
    ch: u8,
    /// The number of an ordered item.
    start: Option<u64>,
    /// Where the item's text begins.
    content: usize,
    /// Whether nothing follows the marker on its line.
    empty: bool,
}

impl Marker {
    fn read(line: &str) -> Option<Marker> {
        let (indent, t) = split_indent(line);
        if indent >= 4 || is_break(t) {
            return None;
        }
        let b = t.as_bytes();
        let digits = b.iter().take_while(|c| c.is_ascii_digit()).count();
        let (ch, start, width) = match b.first()? {
            c @ (b'-' | b'*' | b'+') => (*c, None, 1),
            _ if (1..=9).contains(&digits) && matches!(b.get(digits), Some(b'.' | b')')) => {
                (b[digits], t[..digits].parse().ok(), digits + 1)
            }
            _ => return None,
        };
        let rest = &t[width..];
        if !(rest.is_empty() || rest.starts_with(' ')) {
            return None;
        }
        let gap = rest.len() - rest.trim_start_matches(' ').len();
        let empty = rest.trim().is_empty();
        // More than four spaces after the marker start indented code inside the item.
        let gap = if empty || gap > 4 { 1 } else { gap };
        Some(Marker { ch, start, content: indent + width + gap, empty })
    }

    fn same_list(&self, other: &Marker) -> bool {
        self.ch == other.ch && self.start.is_some() == other.start.is_some()
    }
}

fn list(out: &mut String, lines: &[String], start: usize, first: Marker) -> usize {
    let mut items: Vec<Vec<String>> = Vec::new();
    let mut loose = false;
    let mut content = 0;
    let mut i = start;
    while i < lines.len() {
        let line = &lines[i];
        let (indent, t) = split_indent(line);
        match Marker::read(line) {
            Some(m) if m.same_list(&first) && indent < content.max(1) || i == start => {
                content = m.content;
                items.push(vec![line.get(m.content..).unwrap_or("").to_string()]);
            }
            _ if t.is_empty() => {
                let next = lines[i + 1..].iter().find(|l| !l.trim().is_empty());
                let continues = next.is_some_and(|n| split_indent(n).0 >= content);
                let next_item = next
                    .and_then(|n| Marker::read(n))
                    .is_some_and(|m| m.same_list(&first) && split_indent(next.map_or("", String::as_str)).0 < content);
                if !continues && !next_item {
                    break;
                }
                loose |= next_item;
                if let Some(item) = items.last_mut() {
                    item.push(String::new());
                }
            }
            _ if indent >= content => {
                items.last_mut().into_iter().for_each(|item| item.push(line[content..].to_string()))
            }
            // A lazy line continues the item's paragraph.
            _ if !interrupts(line) && items.last().and_then(|it| it.last()).is_some_and(|l| !l.trim().is_empty()) => {
                items.last_mut().into_iter().for_each(|item| item.push(t.to_string()))
            }
            _ => break,
        }
        i += 1;
    }
    // A blank line at the end of an item separates it from the next, not its blocks.
    let loose = loose || items.iter().any(|item| has_inner_gap(item));
    match first.start {
        None => out.push_str("<ul>\n"),
        Some(1) => out.push_str("<ol>\n"),
        Some(n) => out.push_str(&format!("<ol start=\"{n}\">\n")),
    }
    for item in &items {
        out.push_str("<li>");
        render_into(out, item, !loose);
        if out.ends_with('\n') && !loose {
            out.pop();
        }
        out.push_str("</li>\n");
    }
    out.push_str(if first.start.is_some() { "</ol>\n" } else { "</ul>\n" });
    i
}

/// Whether a blank line stands between two of the item's own lines.
fn has_inner_gap(item: &[String]) -> bool {
    let last = item.iter().rposition(|l| !l.trim().is_empty()).unwrap_or(0);
    item[..last].iter().any(|l| l.trim().is_empty())
}

/// The cells of a table row, split on `|` not escaped.
fn cells(line: &str) -> Vec<String> {
    let t = line.trim();
    let t = t.strip_prefix('|').unwrap_or(t);
    let t = if t.ends_with('|') && !t.ends_with("\\|") { &t[..t.len() - 1] } else { t };
    let mut cells = vec![String::new()];
    let mut chars = t.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.next_if_eq(&'|').is_some() => cells.last_mut().into_iter().for_each(|s| s.push('|')),
            '|' => cells.push(String::new()),
            c => cells.last_mut().into_iter().for_each(|s| s.push(c)),
        }
    }
    cells.into_iter().map(|c| c.trim().to_string()).collect()
}

/// The columns' alignments when `header` and `delimiter` start a table.
fn table_columns(header: &str, delimiter: &str) -> Option<Vec<&'static str>> {
    if !header.contains('|') || !delimiter.contains(['|', '-']) {
        return None;
    }
    let columns = cells(delimiter)
        .iter()
        .map(|c| {
            let dashes = c.trim_start_matches(':').trim_end_matches(':');
            (!dashes.is_empty() && dashes.chars().all(|x| x == '-')).then_some(
                match (c.starts_with(':'), c.ends_with(':')) {
                    (true, true) => "center",
                    (false, true) => "right",
                    (true, false) => "left",
                    _ => "",
                },
            )
        })
        .collect::<Option<Vec<_>>>()?;
    (cells(header).len() == columns.len()).then_some(columns)
}

fn table(out: &mut String, lines: &[String], start: usize, columns: &[&str]) -> usize {
    let row = |out: &mut String, line: &str, tag: &str| {
        let mut cells = cells(line);
        cells.resize(columns.len(), String::new());
        out.push_str("<tr>");
        for (cell, align) in cells.iter().zip(columns) {
            if align.is_empty() {
                out.push_str(&format!("<{tag}>"));
            } else {
                // A class, not a style attribute: the page's CSP allows only Lens's own styles.
                out.push_str(&format!("<{tag} class=\"align-{align}\">"));
            }
            inline(out, cell);
            out.push_str(&format!("</{tag}>"));
        }
        out.push_str("</tr>\n");
    };
    out.push_str("<table><thead>");
    row(out, &lines[start], "th");
    out.push_str("</thead><tbody>\n");
    let mut i = start + 2;
    while i < lines.len() && !interrupts(&lines[i]) {
        row(out, &lines[i], "td");
        i += 1;
    }
    out.push_str("</tbody></table>\n");
    i
}

/// Lines up to a blank line or another block; `===` or `---` under them makes a heading.
fn paragraph(out: &mut String, lines: &[String], start: usize, tight: bool) -> usize {
    let mut i = start + 1;
    let mut setext = None;
    while i < lines.len() {
        let (indent, t) = split_indent(&lines[i]);
        if indent < 4
            && !t.is_empty()
            && (t.trim_end().chars().all(|c| c == '=') || t.trim_end().chars().all(|c| c == '-'))
        {
            setext = Some(if t.starts_with('=') { 1 } else { 2 });
            break;
        }
        if interrupts(&lines[i]) || lines.get(i + 1).is_some_and(|next| table_columns(t, next).is_some()) {
            break;
        }
        i += 1;
    }
    let text = lines[start..i].iter().map(|l| l.trim_start()).collect::<Vec<_>>().join("\n");
    let text = text.trim_end();
    match setext {
        Some(level) => {
            out.push_str(&format!("<h{level}>"));
            inline(out, text);
            out.push_str(&format!("</h{level}>\n"));
            i + 1
        }
        None if tight => {
            inline(out, text);
            out.push('\n');
            i
        }
        None => {
            out.push_str("<p>");
            inline(out, text);
            out.push_str("</p>\n");
            i
        }
    }
}
