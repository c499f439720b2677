//! Model text rendered from Markdown, with raw HTML escaped and unsafe links removed.

use leptos::prelude::*;
use pulldown_cmark::{CowStr, Event, Options, Parser, Tag, html};

/// Only these link schemes survive; anything else (javascript:, data:) becomes `#`.
fn safe_url(url: &str) -> bool {
    let lower = url.trim().to_ascii_lowercase();
    match lower.split_once(':') {
        Some((scheme, _)) if !scheme.contains('/') && !scheme.contains('?') && !scheme.contains('#') => {
            matches!(scheme, "http" | "https" | "mailto")
        }
        _ => true,
    }
}

/// Markdown to HTML where raw HTML in the source shows as text.
pub fn markdown_to_html(src: &str) -> String {
    let parser = Parser::new_ext(src, Options::ENABLE_TABLES).map(|event| match event {
        Event::Html(raw) | Event::InlineHtml(raw) => Event::Text(raw),
        Event::Start(Tag::Link { link_type, dest_url, title, id }) if !safe_url(&dest_url) => {
            Event::Start(Tag::Link { link_type, dest_url: CowStr::Borrowed("#"), title, id })
        }
        Event::Start(Tag::Image { link_type, dest_url, title, id }) if !safe_url(&dest_url) => {
            Event::Start(Tag::Image { link_type, dest_url: CowStr::Borrowed("#"), title, id })
        }
        other => other,
    });
    let mut out = String::new();
    html::push_html(&mut out, parser);
    out
}

/// Renders `src` as Markdown.
#[component]
pub fn Markdown(
    /// The Markdown source.
    #[prop(into)]
    src: Signal<String>,
) -> impl IntoView {
    let html = move || markdown_to_html(&src.get());
    view! { <div class="markdown" inner_html=html></div> }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_markdown() {
        assert_eq!(markdown_to_html("# Hi *there*"), "<h1>Hi <em>there</em></h1>\n");
    }

    #[test]
    fn raw_html_is_escaped() {
        let out = markdown_to_html("<script>alert(1)</script>\n\nand <img src=x onerror=alert(1)> inline");
        assert!(!out.contains("<script>") && !out.contains("<img"), "{out}");
        assert!(out.contains("&lt;script&gt;"), "{out}");
    }

    #[test]
    fn script_links_are_neutralised() {
        let out = markdown_to_html("[x](javascript:alert(1)) [y](https://example.org/a) [z](/chat)");
        assert!(!out.contains("javascript:"), "{out}");
        assert!(out.contains("href=\"https://example.org/a\"") && out.contains("href=\"/chat\""), "{out}");
    }
}
