//! A conversation's title from its first message: readable text, not the Markdown it was
//! typed in. The first line of prose, else the first line of code, without fences and
//! markers, cut on a word.

/// The longest title, in characters (the ellipsis of a cut one included).
const TITLE_CHARS: usize = 60;

/// The title `text` gives a new conversation; empty when it has no words at all.
pub fn title_of(text: &str) -> String {
    let mut in_fence = false;
    let mut first_code = None;
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            in_fence = !in_fence;
            continue;
        }
        if trimmed.is_empty() {
            continue;
        }
        if in_fence {
            first_code.get_or_insert(trimmed);
            continue;
        }
        let prose = plain(trimmed);
        if !prose.is_empty() {
            return cut(&prose);
        }
    }
    first_code.map(|code| cut(&squeeze(code))).unwrap_or_default()
}

/// A line of Markdown as it reads: no heading, quote or list markers, no emphasis or code
/// marks, a link's words without its address.
fn plain(line: &str) -> String {
    let mut rest = line;
    loop {
        let before = rest;
        rest = rest.trim_start_matches('#').trim_start_matches('>').trim_start();
        for bullet in ["- ", "* ", "+ "] {
            rest = rest.strip_prefix(bullet).unwrap_or(rest);
        }
        if let Some((number, after)) = rest.split_once(". ")
            && !number.is_empty()
            && number.chars().all(|c| c.is_ascii_digit())
        {
            rest = after;
        }
        if rest == before {
            break;
        }
    }
    let mut out = String::with_capacity(rest.len());
    let mut chars = rest.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            // Inside a word (`snake_case`) an underscore is the word's own.
            '_' if out.chars().last().is_some_and(char::is_alphanumeric)
                && chars.peek().is_some_and(|n| n.is_alphanumeric()) =>
            {
                out.push(c)
            }
            '*' | '_' | '`' => {}
            // `[words](address)` and `![words](address)` read as their words.
            '!' if chars.peek() == Some(&'[') => {}
            '[' => {}
            ']' if chars.peek() == Some(&'(') => {
                for skipped in chars.by_ref() {
                    if skipped == ')' {
                        break;
                    }
                }
            }
            c => out.push(c),
        }
    }
    squeeze(&out)
}

/// Whitespace runs as one space.
fn squeeze(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// At most [`TITLE_CHARS`] characters, cut after a whole word with an ellipsis.
fn cut(text: &str) -> String {
    if text.chars().count() <= TITLE_CHARS {
        return text.to_owned();
    }
    let room: String = text.chars().take(TITLE_CHARS - 1).collect();
    let whole = match room.rfind(' ') {
        // A single long word is cut where it must be.
        Some(at) if at > 0 => &room[..at],
        _ => room.as_str(),
    };
    format!("{}…", whole.trim_end_matches([',', ';', ':', '.', ' ']))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_alone_titles_the_chat_with_its_first_line_without_the_fence() {
        let title = title_of("```python\nimport matplotlib.pyplot as plt\nplt.plot([1, 2])\n```");
        assert_eq!(title, "import matplotlib.pyplot as plt");
    }

    #[test]
    fn prose_comes_before_code_and_loses_its_markers() {
        assert_eq!(title_of("```bash\nls\n```\n\n## Plot **the** `sales`\nmore"), "Plot the sales");
        assert_eq!(title_of("> - 1. see [the docs](https://x.example/a_b) now"), "see the docs now");
        assert_eq!(title_of("![chart](c.png) of _growth_"), "chart of growth");
        assert_eq!(title_of("why does my_var stay ~/data?"), "why does my_var stay ~/data?");
    }

    #[test]
    fn a_long_line_is_cut_on_a_word() {
        let title = title_of(&"Summarise the quarterly figures for every region ".repeat(3));
        assert!(title.chars().count() <= TITLE_CHARS, "{title}");
        assert_eq!(title, "Summarise the quarterly figures for every region Summarise…");
        let word = title_of(&"x".repeat(100));
        assert_eq!(word.chars().count(), TITLE_CHARS);
    }

    #[test]
    fn nothing_readable_gives_no_title() {
        assert_eq!(title_of("```\n\n```"), "");
        assert_eq!(title_of("  \n **  ** "), "");
    }
}
