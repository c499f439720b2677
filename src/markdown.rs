//! A small Markdown renderer for model text: the CommonMark blocks and inlines answers
//! use, plus GitHub tables and strikethrough. Raw HTML shows as text, only http(s),
//! mailto and relative links survive, and images become links (nothing is fetched
//! because a model wrote an address). Written here rather than taken from a crate: the
//! full CommonMark parser cost 70 KB of the web app's 300 KB gzipped budget.

mod blocks;
mod inline;

/// `src` as HTML, safe to put into the page.
pub fn to_html(src: &str) -> String {
    let lines: Vec<String> = src.lines().map(expand_tabs).collect();
    let mut out = String::new();
    blocks::render_into(&mut out, &lines, false);
    out
}

/// Leading tabs as four spaces each, so indentation is counted in spaces alone.
fn expand_tabs(line: &str) -> String {
    let tabs = line.len() - line.trim_start_matches([' ', '\t']).len();
    if !line[..tabs].contains('\t') {
        return line.to_string();
    }
    let indent: String = line[..tabs].chars().map(|c| if c == '\t' { "    " } else { " " }).collect();
    indent + &line[tabs..]
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
    fn paragraphs_and_breaks() {
        assert_eq!(to_html("one\ntwo  \nthree\n\nfour"), "<p>one\ntwo<br />\nthree</p>\n<p>four</p>\n");
        assert_eq!(to_html("above\n\n---\n\n***"), "<p>above</p>\n<hr />\n<hr />\n");
    }

    #[test]
    fn code_blocks_fenced_indented_and_unclosed() {
        assert_eq!(
            to_html("```python\nif a < b:\n    print(\"x\")\n```\nafter"),
            "<pre><code class=\"language-python\">if a &lt; b:\n    print(&quot;x&quot;)\n</code></pre>\n<p>after</p>\n"
        );
        assert_eq!(
            to_html("    indented\n\n    more\n\ntext"),
            "<pre><code>indented\n\nmore\n</code></pre>\n<p>text</p>\n"
        );
        // While an answer streams, an open fence runs to the end.
        assert_eq!(to_html("~~~\n# not a heading"), "<pre><code># not a heading\n</code></pre>\n");
        assert_eq!(
            to_html("```\"><script>\nx\n```"),
            "<pre><code class=\"language-&quot;&gt;&lt;script&gt;\">x\n</code></pre>\n"
        );
    }

    #[test]
    fn lists_tight_loose_nested_and_numbered() {
        assert_eq!(to_html("- a\n- b"), "<ul>\n<li>a</li>\n<li>b</li>\n</ul>\n");
        assert_eq!(to_html("- a\n\n- b"), "<ul>\n<li><p>a</p>\n</li>\n<li><p>b</p>\n</li>\n</ul>\n");
        assert_eq!(
            to_html("1. one\n   - inner\n   - more\n2. two\nlazy"),
            "<ol>\n<li>one\n<ul>\n<li>inner</li>\n<li>more</li>\n</ul></li>\n<li>two\nlazy</li>\n</ol>\n"
        );
        assert_eq!(to_html("3) three\n4) four"), "<ol start=\"3\">\n<li>three</li>\n<li>four</li>\n</ol>\n");
        assert_eq!(to_html("Text\n- item"), "<p>Text</p>\n<ul>\n<li>item</li>\n</ul>\n");
        assert_eq!(to_html("In 2024. we\n2024. was"), "<p>In 2024. we\n2024. was</p>\n");
        assert_eq!(
            to_html("- code:\n\n  ```\n  x = 1\n  ```\n- next"),
            "<ul>\n<li><p>code:</p>\n<pre><code>x = 1\n</code></pre>\n</li>\n<li><p>next</p>\n</li>\n</ul>\n"
        );
    }

    #[test]
    fn quotes_and_tables() {
        assert_eq!(
            to_html("> quoted\nlazy\n> - item"),
            "<blockquote>\n<p>quoted\nlazy</p>\n<ul>\n<li>item</li>\n</ul>\n</blockquote>\n"
        );
        assert_eq!(
            to_html("Here:\n| a | b \\| c |\n|:--|--:|\n| 1 | `x` |\n\nend"),
            "<p>Here:</p>\n<table><thead><tr><th class=\"align-left\">a</th><th class=\"align-right\">b | c</th></tr>\n</thead><tbody>\n<tr><td class=\"align-left\">1</td><td class=\"align-right\"><code>x</code></td></tr>\n</tbody></table>\n<p>end</p>\n"
        );
        assert_eq!(
            to_html("a | b\n--- | ---\nno | body\nx"),
            "<table><thead><tr><th>a</th><th>b</th></tr>\n</thead><tbody>\n<tr><td>no</td><td>body</td></tr>\n<tr><td>x</td><td></td></tr>\n</tbody></table>\n"
        );
    }

    #[test]
    fn links_autolinks_and_images() {
        assert_eq!(
            to_html("[x](https://e.org/a_(b) \"T\") <https://e.org> see https://e.org/p?q=1."),
            "<p><a href=\"https://e.org/a_(b)\" title=\"T\">x</a> <a href=\"https://e.org\">https://e.org</a> see <a href=\"https://e.org/p?q=1\">https://e.org/p?q=1</a>.</p>\n"
        );
        assert_eq!(to_html("![a chart](https://e.org/c.png)"), "<p><a href=\"https://e.org/c.png\">a chart</a></p>\n");
        assert_eq!(to_html("[no link] and [x]"), "<p>[no link] and [x]</p>\n");
    }

    #[test]
    fn raw_html_is_escaped() {
        let out = to_html("<script>alert(1)</script>\n\nand <img src=x onerror=alert(1)> inline &amp; &#60; & &bogus;");
        assert!(!out.contains("<script>") && !out.contains("<img"), "{out}");
        assert!(out.contains("&lt;script&gt;") && out.contains("&amp; &#60; &amp; &amp;bogus;"), "{out}");
        let out = to_html("[x](\"onmouseover=alert(1)) [y](<a\"b>)");
        assert!(!out.contains("\"onmouseover") && out.contains("href=\"a&quot;b\""), "{out}");
    }

    #[test]
    fn script_links_are_neutralised() {
        let out =
            to_html("[x](javascript:alert(1)) [y](https://example.org/a) [z](/chat) [w](JavaScript:x) <javascript:x>");
        assert!(!out.to_lowercase().contains("javascript:x)") && !out.contains("href=\"javascript"), "{out}");
        assert!(!out.to_lowercase().contains("href=\"javascript"), "{out}");
        assert!(out.contains("href=\"https://example.org/a\"") && out.contains("href=\"/chat\""), "{out}");
    }

    #[test]
    fn random_markdown_never_panics_nor_makes_tags_or_script_links() {
        let alphabet: Vec<char> = "*_~`[]()!<>&#;|-+:=.1 \n\t\\\"'ajs\u{e9}\u{1F600}".chars().collect();
        let pieces =
            ["javascript:", "<script>", "<img src=x>", "```", "http://", "](", "\n\n", "    ", "1. ", "- ", "> "];
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
            assert!(!out.contains("<script") && !out.contains("<img"), "{src:?} -> {out}");
            assert!(!out.to_lowercase().contains("href=\"javascript"), "{src:?} -> {out}");
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
            "[a](<b",
            "[a](b \"c",
            "1. a\n\n\n   b",
        ] {
            let _ = to_html(src);
        }
    }
}
