//! Inline Markdown: code spans, emphasis, strikethrough, links and bare URLs, escapes and
//! hard breaks. Everything else is text, escaped, so raw HTML in the source shows as typed.

/// Appends `text` with the characters HTML gives meaning to escaped.
pub fn escape_into(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            _ => out.push(c),
        }
    }
}

/// Only these link schemes survive; anything else (javascript:, data:) becomes `#`.
pub fn safe_url(url: &str) -> bool {
    let lower = url.trim().to_ascii_lowercase();
    match lower.split_once(':') {
        Some((scheme, _)) if !scheme.contains('/') && !scheme.contains('?') && !scheme.contains('#') => {
            matches!(scheme, "http" | "https" | "mailto")
        }
        _ => true,
    }
}

/// Appends the inline Markdown `text` as HTML.
pub fn render_into(out: &mut String, text: &str) {
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let next = match b[i] {
            b'\\' if b.get(i + 1).is_some_and(|c| c.is_ascii_punctuation()) => {
                escape_into(out, &text[i + 1..i + 2]);
                Some(i + 2)
            }
            b'\\' if b.get(i + 1) == Some(&b'\n') => {
                out.push_str("<br />\n");
                Some(i + 2)
            }
            b'`' => code_span(out, text, i),
            b'*' | b'_' | b'~' => emphasis(out, text, i),
            b'!' if b.get(i + 1) == Some(&b'[') => link(out, text, i + 1, true),
            b'[' => link(out, text, i, false),
            b'<' => angle_link(out, text, i),
            b'h' if starts_word(text, i) => bare_url(out, text, i),
            b'&' => entity(out, text, i),
            b'\n' => {
                let spaces = out.len() - out.trim_end_matches(' ').len();
                out.truncate(out.len() - spaces);
                out.push_str(if spaces >= 2 { "<br />\n" } else { "\n" });
                Some(i + 1)
            }
            _ => None,
        };
        i = match next {
            Some(n) => n,
            None => {
                // A character with no meaning here (or a delimiter that found no partner).
                let run = if b[i].is_ascii_punctuation() { run_len(b, i) } else { 1 };
                let end = i + text[i..].chars().next().map_or(run, |c| c.len_utf8().max(run));
                escape_into(out, &text[i..end]);
                end
            }
        };
    }
}

/// How many times `b[i]` repeats from `i`.
fn run_len(b: &[u8], i: usize) -> usize {
    b[i..].iter().take_while(|&&c| c == b[i]).count()
}

fn starts_word(text: &str, i: usize) -> bool {
    text[..i].chars().next_back().is_none_or(|c| c.is_whitespace() || c == '(')
}

/// Where the backtick run closing the one of length `run` before `from` starts.
fn code_close(b: &[u8], from: usize, run: usize) -> Option<usize> {
    let mut j = from;
    while j < b.len() {
        if b[j] == b'`' {
            let r = run_len(b, j);
            if r == run {
                return Some(j);
            }
            j += r;
        } else {
            j += 1;
        }
    }
    None
}

fn code_span(out: &mut String, text: &str, i: usize) -> Option<usize> {
    let run = run_len(text.as_bytes(), i);
    let end = code_close(text.as_bytes(), i + run, run)?;
    let code = text[i + run..end].replace('\n', " ");
    let code = match code.strip_prefix(' ').and_then(|c| c.strip_suffix(' ')) {
        Some(inner) if !inner.trim().is_empty() => inner,
        _ => &code,
    };
    out.push_str("<code>");
    escape_into(out, code);
    out.push_str("</code>");
    Some(end + run)
}

/// `*em*`, `**strong**`, `***both***`, the same with `_` inside no word, and `~~del~~`.
fn emphasis(out: &mut String, text: &str, i: usize) -> Option<usize> {
    let b = text.as_bytes();
    let d = b[i];
    let run = run_len(b, i);
    let n = match d {
        b'~' if run == 2 => 2,
        b'~' => return None,
        _ => run.min(3),
    };
    if text[i + run..].chars().next().is_none_or(char::is_whitespace) {
        return None;
    }
    if d == b'_' && text[..i].chars().next_back().is_some_and(char::is_alphanumeric) {
        return None;
    }
    let mut j = i + run;
    while j < b.len() {
        match b[j] {
            b'\\' => j += 2,
            b'`' => {
                let r = run_len(b, j);
                j = code_close(b, j + r, r).map_or(j + r, |e| e + r);
            }
            c if c == d => {
                let r = run_len(b, j);
                let after_ok = d != b'_' || text[j + r..].chars().next().is_none_or(|c| !c.is_alphanumeric());
                let before_ok = !b[j - 1].is_ascii_whitespace();
                if r == n && j > i + n && before_ok && after_ok {
                    let (open, close) = match (d, n) {
                        (b'~', _) => ("<del>", "</del>"),
                        (_, 1) => ("<em>", "</em>"),
                        (_, 2) => ("<strong>", "</strong>"),
                        _ => ("<em><strong>", "</strong></em>"),
                    };
                    out.push_str(open);
                    render_into(out, &text[i + n..j]);
                    out.push_str(close);
                    return Some(j + n);
                }
                j += r;
            }
            _ => j += 1,
        }
    }
    None
}

/// `[label](url "title")`; as an image (`![alt](url)`) it becomes a link too, so a
/// model's answer never makes the browser fetch an address by itself.
fn link(out: &mut String, text: &str, i: usize, image: bool) -> Option<usize> {
    let b = text.as_bytes();
    let mut depth = 0;
    let mut j = i;
    let close = loop {
        match b.get(j)? {
            b'\\' => j += 1,
            b'[' => depth += 1,
            b']' => {
                depth -= 1;
                if depth == 0 {
                    break j;
                }
            }
            b'`' => {
                let r = run_len(b, j);
                j = code_close(b, j + r, r).map_or(j + r - 1, |e| e + r - 1);
            }
            _ => {}
        }
        j += 1;
    };
    let rest = text[close + 1..].strip_prefix('(')?;
    let (url, title, used) = destination(rest)?;
    out.push_str("<a href=\"");
    escape_into(out, if safe_url(&url) { &url } else { "#" });
    out.push('"');
    if let Some(title) = title {
        out.push_str(" title=\"");
        escape_into(out, &title);
        out.push('"');
    }
    out.push('>');
    let label = &text[i + 1..close];
    if image {
        escape_into(out, if label.is_empty() { "image" } else { label });
    } else {
        render_into(out, label);
    }
    out.push_str("</a>");
    Some(close + 2 + used)
}

/// The destination and title after `(`, and how many bytes through `)` they took.
fn destination(rest: &str) -> Option<(String, Option<String>, usize)> {
    let trimmed = rest.trim_start();
    let mut used = rest.len() - trimmed.len();
    let url = if let Some(inner) = trimmed.strip_prefix('<') {
        let end = inner.find(['>', '\n'])?;
        used += end + 2;
        inner[..end].to_string()
    } else {
        let mut depth = 0usize;
        let end = trimmed
            .char_indices()
            .find(|&(_, c)| match c {
                '(' => {
                    depth += 1;
                    false
                }
                ')' if depth == 0 => true,
                ')' => {
                    depth -= 1;
                    false
                }
                c => c.is_whitespace(),
            })
            .map_or(trimmed.len(), |(k, _)| k);
        used += end;
        trimmed[..end].to_string()
    };
    let after = &rest[used..];
    let spaced = after.trim_start();
    used += after.len() - spaced.len();
    let mut title = None;
    if let Some(q @ ('"' | '\'')) = spaced.chars().next() {
        let end = spaced[1..].find(q)?;
        title = Some(spaced[1..1 + end].to_string());
        let after = &spaced[end + 2..];
        used += end + 2 + (after.len() - after.trim_start().len());
    }
    rest[used..].starts_with(')').then_some((url, title, used + 1))
}

/// `<https://…>` and `<mailto:…>`; any other `<` is text.
fn angle_link(out: &mut String, text: &str, i: usize) -> Option<usize> {
    let inner = &text[i + 1..];
    let end = inner.find('>')?;
    let url = &inner[..end];
    let lower = url.to_ascii_lowercase();
    let scheme = ["http://", "https://", "mailto:"].iter().any(|s| lower.starts_with(s));
    if !scheme || url.contains(|c: char| c.is_whitespace() || c == '<') {
        return None;
    }
    push_link(out, url);
    Some(i + end + 2)
}

/// A bare `http(s)://` address up to the next space, less trailing punctuation.
fn bare_url(out: &mut String, text: &str, i: usize) -> Option<usize> {
    let rest = &text[i..];
    let scheme = if rest.starts_with("https://") { 8 } else { 7 };
    if !rest.starts_with("https://") && !rest.starts_with("http://") {
        return None;
    }
    let mut end = rest.find(|c: char| c.is_whitespace() || c == '<').unwrap_or(rest.len());
    while end > scheme {
        let last = rest[..end].chars().next_back()?;
        let unbalanced = last == ')' && rest[..end].matches('(').count() < rest[..end].matches(')').count();
        if !(".,:;!?'\"*_~".contains(last) || unbalanced) {
            break;
        }
        end -= last.len_utf8();
    }
    if end == scheme {
        return None;
    }
    push_link(out, &rest[..end]);
    Some(i + end)
}

fn push_link(out: &mut String, url: &str) {
    out.push_str("<a href=\"");
    escape_into(out, url);
    out.push_str("\">");
    escape_into(out, url);
    out.push_str("</a>");
}

/// A character reference (`&amp;`, `&#60;`, `&#x3C;`, a few common names) stays one;
/// any other `&` is escaped.
fn entity(out: &mut String, text: &str, i: usize) -> Option<usize> {
    let rest = &text[i + 1..];
    let end = rest.find(';').filter(|&e| e <= 10)?;
    let name = &rest[..end];
    let ok = match name.strip_prefix('#') {
        Some(n) => match n.strip_prefix(['x', 'X']) {
            Some(hex) => !hex.is_empty() && hex.chars().all(|c| c.is_ascii_hexdigit()),
            None => !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()),
        },
        None => matches!(name, "amp" | "lt" | "gt" | "quot" | "apos" | "nbsp" | "copy" | "hellip" | "mdash" | "ndash"),
    };
    if !ok {
        return None;
    }
    out.push_str(&text[i..i + end + 2]);
    Some(i + end + 2)
}
