//! The Content-Security-Policy the web app is served with: only Lens's own scripts,
//! wasm, styles, images and connections. trunk's bootstrap is one inline module script,
//! so its SHA-256 is read from the built `index.html` at start and allowed by hash; a
//! script anyone slips into the page (through Markdown, a file name, program output)
//! matches no hash and does not run.

use std::path::Path;

use base64::{Engine, engine::general_purpose::STANDARD as B64};
use sha2::{Digest, Sha256};

/// The policy for the app in `dist`.
/// `frames`: the preview origin, the only one the page frames (HTML and PDF previews).
/// Images may be `data:` too: a notebook's outputs carry theirs within.
pub fn content_security_policy(dist: &Path, frames: Option<&str>) -> String {
    let index = std::fs::read_to_string(dist.join("index.html")).unwrap_or_default();
    let hashes: String =
        inline_scripts(&index).map(|s| format!(" 'sha256-{}'", B64.encode(Sha256::digest(s)))).collect();
    let frames = frames.unwrap_or("'none'");
    format!(
        "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'{hashes}; style-src 'self'; img-src 'self' data:; \
         connect-src 'self'; frame-src {frames}; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; \
         form-action 'self'"
    )
}

/// The bodies of the `<script>` elements that have no `src`.
fn inline_scripts(html: &str) -> impl Iterator<Item = &str> {
    html.split("<script").skip(1).filter_map(|rest| {
        let (attributes, after) = rest.split_once('>')?;
        let (body, _) = after.split_once("</script>")?;
        (!attributes.contains("src=")).then_some(body)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_scripts_are_allowed_by_their_hash_and_nothing_else_is() {
        let dir = tempfile::tempdir().unwrap();
        let body = "\nimport init from '/app.js';\nawait init();\n";
        let html = format!("<head><script type=\"module\">{body}</script><script src=\"/x.js\"></script></head>");
        std::fs::write(dir.path().join("index.html"), html).unwrap();
        let csp = content_security_policy(dir.path(), Some("*:8081"));
        let hash = B64.encode(Sha256::digest(body));
        assert!(csp.contains(&format!("script-src 'self' 'wasm-unsafe-eval' 'sha256-{hash}';")), "{csp}");
        assert!(!csp.contains("unsafe-inline") && csp.contains("style-src 'self';"), "{csp}");
        assert!(csp.contains("frame-src *:8081;"), "{csp}");
        let none = content_security_policy(&dir.path().join("missing"), None);
        assert!(none.contains("script-src 'self' 'wasm-unsafe-eval';") && none.contains("frame-src 'none';"), "{none}");
    }
}
