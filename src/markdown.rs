//! Model text as HTML: pulldown-cmark (CommonMark with tables, strikethrough, task lists
//! and footnotes; heading attributes off) under Lens's safety rules. Raw HTML shows as
//! text, only http(s), mailto and relative links survive, images become links (nothing
//! is fetched because a model wrote an address), table alignment is a class (the page's
//! Content-Security-Policy allows no style attributes), and bare web addresses become
//! links. Quotes and lists nest at most 16 deep. pulldown-cmark parses in linear time and
//! the rules look at each character a few times, so no answer can freeze the page.

use std::collections::VecDeque;

use pulldown_cmark::{Alignment, CowStr, Event, LinkType, Options, Parser, Tag, TagEnd, TextMergeStream, html};

/// The extensions answers use.
fn options() -> Options {
    Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS | Options::ENABLE_FOOTNOTES
}

/// `src` as HTML, safe to put into the page.
pub fn to_html(src: &str) -> String {
    render(src).0
}

/// `src` as HTML, and how many characters the safety rules looked at doing it: the
/// operation count a test holds to a multiple of the input's length (pulldown-cmark's own
/// work is linear by its design and measured in the benchmark).
fn render(src: &str) -> (String, usize) {
    let mut out = String::with_capacity(src.len() * 3 / 2);
    let events = TextMergeStream::new(Parser::new_ext(src, options()));
    let mut filter = SafeEvents { events, safe: Safe::default(), ready: VecDeque::new() };
    html::push_html(&mut out, &mut filter);
    (out, filter.safe.steps)
}

/// The parser's events with the safety rules applied; one buffer serves every event.
struct SafeEvents<'a, I: Iterator<Item = Event<'a>>> {
    events: I,
    safe: Safe,
    ready: VecDeque<Event<'a>>,
}

impl<'a, I: Iterator<Item = Event<'a>>> Iterator for SafeEvents<'a, I> {
    type Item = Event<'a>;

    fn next(&mut self) -> Option<Event<'a>> {
        loop {
            if let Some(event) = self.ready.pop_front() {
                return Some(event);
            }
            let event = self.events.next()?;
            self.safe.map(event, &mut self.ready);
        }
    }
}

/// Whether a link address is one Lens lets through: http(s), mailto, or relative.
fn allowed_address(dest: &str) -> bool {
    let dest = dest.trim();
    let scheme_end = dest.find([':', '/', '?', '#']);
    match scheme_end {
        Some(i) if dest[i..].starts_with(':') => {
            matches!(dest[..i].to_ascii_lowercase().as_str(), "http" | "https" | "mailto")
        }
        _ => true,
    }
}

/// What an opened link or image became, so its end is mapped the same way.
enum Opened {
    Link,
    /// An unsafe link: its text stays, the `<a>` goes.
    DroppedLink,
    /// An image shown as a link to its address.
    ImageLink,
    /// An image whose address is unsafe, or inside a link: its text only.
    ImageText,
}

/// The event filter that applies the safety rules.
#[derive(Default)]
struct Safe {
    opened: Vec<Opened>,
    /// Inside a code block, where text is never made into links.
    in_code: bool,
    alignments: Vec<Alignment>,
    in_head: bool,
    cell: usize,
    /// Characters looked at by the rules (see `render`).
    steps: usize,
    /// The open quotes and lists, each kept or flattened (see `MAX_NESTING`).
    nest: Vec<bool>,
    /// The open list items, each kept or flattened with its list.
    items: Vec<bool>,
}

/// How deep quotes and lists nest in the page; deeper ones show at this depth. Real
/// answers nest a few levels; 500 `>` made 27 bytes of HTML per byte of answer and a
/// DOM 500 deep, several times the cost of ordinary text in the browser.
const MAX_NESTING: usize = 16;

impl Safe {
    fn in_link(&self) -> bool {
        self.opened.iter().any(|o| matches!(o, Opened::Link | Opened::ImageLink))
    }

    fn map<'a>(&mut self, event: Event<'a>, out: &mut VecDeque<Event<'a>>) {
        match event {
            // Raw HTML is text; an HTML block reads as a paragraph of it.
            Event::Html(raw) | Event::InlineHtml(raw) => out.push_back(Event::Text(raw)),
            Event::Start(Tag::HtmlBlock) => out.push_back(Event::Start(Tag::Paragraph)),
            Event::End(TagEnd::HtmlBlock) => out.push_back(Event::End(TagEnd::Paragraph)),
            Event::Start(Tag::Link { link_type, dest_url, title, id }) => {
                if allowed_address(&dest_url) {
                    self.opened.push(Opened::Link);
                    out.push_back(Event::Start(Tag::Link { link_type, dest_url, title, id }))
                } else {
                    self.opened.push(Opened::DroppedLink);
                }
            }
            Event::Start(Tag::Image { dest_url, title, id, .. }) => {
                if allowed_address(&dest_url) && !self.in_link() {
                    self.opened.push(Opened::ImageLink);
                    out.push_back(Event::Start(Tag::Link { link_type: LinkType::Inline, dest_url, title, id }))
                } else {
                    self.opened.push(Opened::ImageText);
                }
            }
            Event::End(TagEnd::Link | TagEnd::Image) => {
                if let Some(Opened::Link | Opened::ImageLink) = self.opened.pop() {
                    out.push_back(Event::End(TagEnd::Link));
                }
            }
            Event::Start(tag @ (Tag::BlockQuote(_) | Tag::List(_))) => {
                let keep = self.nest.len() < MAX_NESTING;
                self.nest.push(keep);
                if keep {
                    out.push_back(Event::Start(tag))
                }
            }
            Event::End(end @ (TagEnd::BlockQuote(_) | TagEnd::List(_))) => {
                if self.nest.pop().unwrap_or(true) {
                    out.push_back(Event::End(end))
                }
            }
            Event::Start(Tag::Item) => {
                // An item is its list's child: it goes when its list went, as a line.
                let keep = self.nest.last().copied().unwrap_or(true);
                self.items.push(keep);
                out.push_back(if keep { Event::Start(Tag::Item) } else { Event::HardBreak })
            }
            Event::End(TagEnd::Item) => {
                if self.items.pop().unwrap_or(true) {
                    out.push_back(Event::End(TagEnd::Item))
                }
            }
            Event::Start(Tag::CodeBlock(kind)) => {
                self.in_code = true;
                out.push_back(Event::Start(Tag::CodeBlock(kind)))
            }
            Event::End(TagEnd::CodeBlock) => {
                self.in_code = false;
                out.push_back(Event::End(TagEnd::CodeBlock))
            }
            Event::Start(Tag::Table(alignments)) => {
                self.alignments = alignments.clone();
                out.push_back(Event::Start(Tag::Table(alignments)))
            }
            Event::Start(Tag::TableHead) => {
                (self.in_head, self.cell) = (true, 0);
                out.push_back(Event::Start(Tag::TableHead))
            }
            Event::End(TagEnd::TableHead) => {
                self.in_head = false;
                out.push_back(Event::End(TagEnd::TableHead))
            }
            Event::Start(Tag::TableRow) => {
                self.cell = 0;
                out.push_back(Event::Start(Tag::TableRow))
            }
            Event::Start(Tag::TableCell) => out.push_back(Event::Html(self.open_cell().into())),
            Event::End(TagEnd::TableCell) => {
                self.cell += 1;
                out.push_back(Event::Html(if self.in_head { "</th>" } else { "</td>" }.into()))
            }
            Event::Text(text) if !self.in_code && !self.in_link() => linkify(text, out, &mut self.steps),
            other => out.push_back(other),
        }
    }

    /// A cell's opening tag, its alignment a class.
    fn open_cell(&self) -> &'static str {
        match (self.in_head, self.alignments.get(self.cell)) {
            (true, Some(Alignment::Left)) => "<th class=\"align-left\">",
            (true, Some(Alignment::Center)) => "<th class=\"align-center\">",
            (true, Some(Alignment::Right)) => "<th class=\"align-right\">",
            (true, _) => "<th>",
            (false, Some(Alignment::Left)) => "<td class=\"align-left\">",
            (false, Some(Alignment::Center)) => "<td class=\"align-center\">",
            (false, Some(Alignment::Right)) => "<td class=\"align-right\">",
            (false, _) => "<td>",
        }
    }
}

/// Text with its bare `http://` and `https://` addresses made links. An address ends at
/// white space or `<`, without trailing punctuation (a closing parenthesis only when it
/// has no opening one inside).
fn linkify<'a>(text: CowStr<'a>, events: &mut VecDeque<Event<'a>>, steps: &mut usize) {
    if !text.contains("http") {
        events.push_back(Event::Text(text));
        return;
    }
    let mut rest: &str = &text;
    while let Some(start) = next_address(rest, steps) {
        let tail = &rest[start..];
        let end = address_end(tail, steps);
        let address = &tail[..end];
        if address.len() <= "https://".len() {
            events.push_back(Event::Text(rest[..start + end.max(1)].to_owned().into()));
            rest = &rest[start + end.max(1)..];
            continue;
        }
        if start > 0 {
            events.push_back(Event::Text(rest[..start].to_owned().into()));
        }
        let link = Tag::Link {
            link_type: LinkType::Autolink,
            dest_url: address.to_owned().into(),
            title: CowStr::Borrowed(""),
            id: CowStr::Borrowed(""),
        };
        events.extend([Event::Start(link), Event::Text(address.to_owned().into()), Event::End(TagEnd::Link)]);
        rest = &tail[end..];
    }
    if !rest.is_empty() {
        events.push_back(Event::Text(rest.to_owned().into()));
    }
}

/// Where the address at the start of `tail` ends: at white space or `<`, less trailing
/// punctuation. The parentheses are counted once and the counts kept as the end moves
/// back, so an address of 100,000 `)` costs two passes, not one pass per `)`; `steps`
/// counts the characters looked at.
fn address_end(tail: &str, steps: &mut usize) -> usize {
    let mut end = tail.find(|c: char| c.is_whitespace() || c == '<').unwrap_or(tail.len());
    let (mut open, mut close) = (0usize, 0usize);
    for c in tail[..end].chars() {
        *steps += 1;
        match c {
            '(' => open += 1,
            ')' => close += 1,
            _ => {}
        }
    }
    while let Some(last) = tail[..end].chars().next_back() {
        *steps += 1;
        let unbalanced = last == ')' && open < close;
        if matches!(last, '.' | ',' | ':' | ';' | '!' | '?' | '"' | '\'') || unbalanced {
            end -= last.len_utf8();
            close -= usize::from(last == ')');
        } else {
            break;
        }
    }
    end
}

/// Where the next bare address starts: `http://` or `https://` not inside a word.
fn next_address(text: &str, steps: &mut usize) -> Option<usize> {
    let mut from = 0;
    while let Some(i) = text[from..].find("http").map(|i| i + from) {
        *steps += i - from + 1;
        let after = &text[i..];
        let word_before = text[..i].chars().last().is_some_and(|c| c.is_alphanumeric());
        if !word_before && (after.starts_with("http://") || after.starts_with("https://")) {
            return Some(i);
        }
        from = i + 4;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::to_html;

    #[test]
    fn headings_and_emphasis() {
        assert_eq!(to_html("# Hi *there*"), "<h1>Hi <em>there</em></h1>\n");
        assert_eq!(to_html("Title ##\n===\n\n## Two ##"), "<h1>Title ##</h1>\n<h2>Two</h2>\n");
        assert_eq!(
            to_html("**bold** and __also__ and ***both*** and ~~gone~~"),
            "<p><strong>bold</strong> and <strong>also</strong> and <em><strong>both</strong></em> and <del>gone</del></p>\n"
        );
        assert_eq!(to_html("**a *b* c**"), "<p><strong>a <em>b</em> c</strong></p>\n");
        assert_eq!(to_html("# Title {#id .class}"), "<h1>Title {#id .class}</h1>\n", "no heading attributes");
    }

    #[test]
    fn what_is_not_emphasis_stays_as_typed() {
        assert_eq!(
            to_html("2 * 3 * 4 and snake_case_name and **open"),
            "<p>2 * 3 * 4 and snake_case_name and **open</p>\n"
        );
        assert_eq!(to_html(r"\*not\* `*code*`"), "<p>*not* <code>*code*</code></p>\n");
    }

    #[test]
    fn code_blocks_keep_their_language_and_an_open_fence_runs_to_the_end() {
        assert_eq!(
            to_html("```python\nif a < b:\n    print(\"x\")\n```\nafter"),
            "<pre><code class=\"language-python\">if a &lt; b:\n    print(\"x\")\n</code></pre>\n<p>after</p>\n"
        );
        // While an answer streams, an open fence runs to the end.
        assert_eq!(to_html("~~~\n# not a heading"), "<pre><code># not a heading</code></pre>\n");
        let out = to_html("```\"><script>\nx\n```");
        assert!(!out.contains("<script") && out.contains("&lt;script&gt;"), "{out}");
        assert_eq!(to_html("```\nhttps://e.org\n```"), "<pre><code>https://e.org\n</code></pre>\n");
    }

    #[test]
    fn lists_tasks_quotes_and_footnotes() {
        assert_eq!(to_html("- a\n- b"), "<ul>\n<li>a</li>\n<li>b</li>\n</ul>\n");
        assert_eq!(to_html("3) three\n4) four"), "<ol start=\"3\">\n<li>three</li>\n<li>four</li>\n</ol>\n");
        let tasks = to_html("- [x] done\n- [ ] open");
        assert!(tasks.contains("checked=\"\"") && tasks.matches("type=\"checkbox\"").count() == 2, "{tasks}");
        assert_eq!(to_html("> quoted\nlazy"), "<blockquote>\n<p>quoted\nlazy</p>\n</blockquote>\n");
        let notes = to_html("Said[^1].\n\n[^1]: Where.");
        assert!(notes.contains("footnote-reference") && notes.contains("footnote-definition"), "{notes}");
    }

    #[test]
    fn tables_align_by_class_never_by_style() {
        assert_eq!(
            to_html("| a | b \\| c | d |\n|:--|--:|:-:|\n| 1 | `x` | y |"),
            "<table><thead><tr><th class=\"align-left\">a</th><th class=\"align-right\">b | c</th><th \
             class=\"align-center\">d</th></tr></thead><tbody>\n<tr><td class=\"align-left\">1</td><td \
             class=\"align-right\"><code>x</code></td><td class=\"align-center\">y</td></tr>\n</tbody></table>\n"
        );
        assert!(!to_html("a | b\n:-: | ---\n1 | 2").contains("style"));
    }

    #[test]
    fn links_autolinks_reference_links_and_images() {
        assert_eq!(
            to_html("[x](https://e.org/a_(b) \"T\") <https://e.org> see https://e.org/p?q=1."),
            "<p><a href=\"https://e.org/a_(b)\" title=\"T\">x</a> <a href=\"https://e.org\">https://e.org</a> see <a href=\"https://e.org/p?q=1\">https://e.org/p?q=1</a>.</p>\n"
        );
        assert_eq!(
            to_html("(see https://e.org/x), and [ref][r]\n\n[r]: /chat"),
            "<p>(see <a href=\"https://e.org/x\">https://e.org/x</a>), and <a href=\"/chat\">ref</a></p>\n"
        );
        assert_eq!(to_html("![a chart](https://e.org/c.png)"), "<p><a href=\"https://e.org/c.png\">a chart</a></p>\n");
        assert_eq!(
            to_html("[![logo](https://e.org/l.png)](https://e.org)"),
            "<p><a href=\"https://e.org\">logo</a></p>\n"
        );
        assert_eq!(to_html("[no link] and [x]"), "<p>[no link] and [x]</p>\n");
        assert_eq!(to_html("xhttps://e.org and http:// alone"), "<p>xhttps://e.org and http:// alone</p>\n");
    }

    #[test]
    fn raw_html_is_escaped() {
        let out = to_html("<script>alert(1)</script>\n\nand <img src=x onerror=alert(1)> inline &amp; &#60; & &bogus;");
        assert!(!out.contains("<script>") && !out.contains("<img"), "{out}");
        assert!(out.contains("&lt;script&gt;") && out.contains("&amp; &lt; &amp; &amp;bogus;"), "{out}");
        let out = to_html("<div onclick=\"x()\">\nblock\n</div>");
        assert!(!out.contains("<div") && out.starts_with("<p>&lt;div"), "{out}");
        let out = to_html("[x](\"onmouseover=alert(1)) [y](<a\"b>)");
        assert!(!out.contains("\"onmouseover") && out.contains("href=\"a%22b\""), "{out}");
    }

    #[test]
    fn script_links_are_neutralised() {
        let out = to_html(
            "[x](javascript:alert(1)) [y](https://example.org/a) [z](/chat) [w](JavaScript:x) <javascript:x> \
             [d](data:text/html,hi) ![i](javascript:x) [v]( vbscript:x)",
        );
        assert!(!out.to_lowercase().contains("href=\"javascript"), "{out}");
        assert!(!out.contains("href=\"data:") && !out.contains("vbscript"), "{out}");
        assert!(out.contains("href=\"https://example.org/a\"") && out.contains("href=\"/chat\""), "{out}");
        assert!(
            out.starts_with("<p>x <a href=\"https://example.org/a\">y</a>"),
            "a dropped link keeps its text: {out}"
        );
    }

    /// Every tag in `out` (text `<` is always escaped) is one Markdown makes, with no
    /// style or event attribute.
    fn assert_only_safe_tags(src: &str, out: &str) {
        const TAGS: &[&str] = &[
            "p",
            "em",
            "strong",
            "del",
            "code",
            "pre",
            "a",
            "ul",
            "ol",
            "li",
            "blockquote",
            "h1",
            "h2",
            "h3",
            "h4",
            "h5",
            "h6",
            "hr",
            "br",
            "table",
            "thead",
            "tbody",
            "tr",
            "th",
            "td",
            "input",
            "sup",
            "div",
        ];
        for tag in out.split('<').skip(1).map(|t| t.split('>').next().unwrap_or("")) {
            let name = tag.trim_start_matches('/').split([' ', '/']).next().unwrap_or("");
            assert!(TAGS.contains(&name), "{src:?} made <{tag}>: {out}");
            // Attribute names only: what is quoted is a value, escaped.
            let attrs: String =
                tag.split_once(' ').map(|(_, a)| a).unwrap_or("").split('"').step_by(2).collect::<Vec<_>>().join(" ");
            assert!(
                !attrs.contains("style") && !attrs.contains(" on") && !attrs.starts_with("on"),
                "{src:?} -> <{tag}>"
            );
            // A footnote's definition is the one `div`, and it says so.
            assert!(name != "div" || tag.starts_with("div class=\"footnote-definition\"") || tag == "/div", "<{tag}>");
        }
    }

    #[test]
    fn random_markdown_never_panics_nor_makes_tags_or_script_links() {
        let alphabet: Vec<char> = "*_~`[]()!<>&#;|-+:=.1 \n\t\\\"'ajs\u{e9}\u{1F600}".chars().collect();
        let pieces = [
            "javascript:",
            "<script>",
            "<img src=x>",
            "```",
            "http://",
            "](",
            "\n\n",
            "    ",
            "1. ",
            "- ",
            "> ",
            "![",
            "[^1]",
            "| --- |",
            "<div style=x>",
        ];
        let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = move |n: usize| {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 33) as usize % n
        };
        for _ in 0..20_000 {
            let mut src = String::new();
            for _ in 0..next(40) {
                if next(4) == 0 {
                    src.push_str(pieces[next(pieces.len())]);
                } else {
                    src.push(alphabet[next(alphabet.len())]);
                }
            }
            let out = to_html(&src);
            assert_only_safe_tags(&src, &out);
            assert!(!out.to_lowercase().contains("href=\"javascript"), "{src:?} -> {out}");
        }
    }

    #[test]
    fn bare_addresses_cost_a_few_looks_per_character() {
        // A model can write an address followed by 100,000 `)`: trimming them one at a
        // time while recounting the parentheses looked at 5,000,000,000 characters and froze
        // the page for seconds every time the chat was opened.
        let closing = format!("see https://a{}", ")".repeat(100_000));
        let (out, steps) = super::render(&closing);
        assert!(out.starts_with("<p>see <a href=\"https://a\">https://a</a>)))"), "{}", &out[..80]);
        assert!(steps <= 3 * closing.len(), "{steps} looks for {} bytes", closing.len());
        for src in [
            format!("https://a{}", "(".repeat(100_000)),
            format!("https://a/{}", "()".repeat(50_000) + &")".repeat(50_000)),
            "https://a) ".repeat(20_000),
            format!("https://a{}", ".".repeat(100_000)),
            "http".repeat(50_000),
            "https://".repeat(20_000),
            "xhttps://a ".repeat(20_000),
        ] {
            let (out, steps) = super::render(&src);
            assert!(!out.is_empty());
            assert!(steps <= 3 * src.len(), "{:?}…: {steps} looks for {} bytes", &src[..20], src.len());
        }
    }

    #[test]
    fn quotes_and_lists_nest_sixteen_deep_and_keep_their_text() {
        let quotes = to_html(&(">".repeat(500) + " deep"));
        assert_eq!(quotes.matches("<blockquote>").count(), 16, "{quotes}");
        assert_eq!(quotes.matches("</blockquote>").count(), 16, "{quotes}");
        assert!(quotes.contains("<p>deep</p>"), "{quotes}");
        let src: String = (0..40).map(|i| format!("{}- item{i}\n", "  ".repeat(i))).collect();
        let lists = to_html(&src);
        assert_eq!(lists.matches("<ul>").count(), 16, "{lists}");
        assert_eq!(lists.matches("</ul>").count(), 16, "{lists}");
        assert_eq!(lists.matches("<li>").count(), lists.matches("</li>").count(), "{lists}");
        assert!((0..40).all(|i| lists.contains(&format!("item{i}"))), "every item's text stays: {lists}");
        assert!(lists.contains("item16<br />\nitem17"), "a flattened item is a line: {lists}");
        // Real answers nest a few levels, unchanged.
        assert_eq!(
            to_html("> a\n>> b\n\n- x\n  - y"),
            "<blockquote>\n<p>a</p>\n<blockquote>\n<p>b</p>\n</blockquote>\n</blockquote>\n<ul>\n<li>x\n<ul>\n<li>y</li>\n</ul>\n</li>\n</ul>\n"
        );
    }

    #[test]
    fn a_megabyte_of_hostile_markdown_renders() {
        for src in [
            ">".repeat(50_000),
            "*".repeat(100_000) + &"[".repeat(100_000) + "x",
            (0..2_000).map(|i| format!("{}- item\n", "  ".repeat(i))).collect(),
            "*a **b ".repeat(100_000),
            "[a](".repeat(100_000),
        ] {
            let out = to_html(&src);
            assert!(!out.is_empty());
            assert_only_safe_tags("(hostile)", &out);
        }
    }

    #[test]
    fn any_text_renders_without_panicking() {
        for src in [
            "*",
            "**",
            "[",
            "[]()",
            "![",
            "`",
            "``a`",
            "\\",
            "&",
            "<",
            "- ",
            "1.",
            "|",
            "|-|",
            "> ",
            "#",
            "é*é*",
            "**é**",
            "a\u{2003}*b*",
            "~~",
            "```",
            "\t- x\n\t\t- y",
            "http://",
            "https://é",
            "[a](<b",
            "[a](b \"c",
            "1. a\n\n\n   b",
            "[^x]",
            "- [ ]",
        ] {
            let _ = to_html(src);
        }
    }
}
