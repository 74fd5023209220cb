//! The page's files, embedded in the binary: `cargo run -- --web-port
//! 8080` needs nothing else. Written for this project (WebGL used
//! directly); nothing is fetched from elsewhere.

/// One embedded file.
#[derive(Debug)]
pub struct Asset {
    /// Path below `/`.
    pub name: &'static str,
    /// `Content-Type`.
    pub content_type: &'static str,
    /// The text.
    pub body: &'static str,
}

const HTML: &str = "text/html; charset=utf-8";
const JS: &str = "text/javascript; charset=utf-8";
const CSS: &str = "text/css; charset=utf-8";

/// Every file the page uses.
pub const ASSETS: [Asset; 6] = [
    Asset {
        name: "index.html",
        content_type: HTML,
        body: include_str!("assets/index.html"),
    },
    Asset {
        name: "style.css",
        content_type: CSS,
        body: include_str!("assets/style.css"),
    },
    Asset {
        name: "math.js",
        content_type: JS,
        body: include_str!("assets/math.js"),
    },
    Asset {
        name: "protocol.js",
        content_type: JS,
        body: include_str!("assets/protocol.js"),
    },
    Asset {
        name: "render.js",
        content_type: JS,
        body: include_str!("assets/render.js"),
    },
    Asset {
        name: "main.js",
        content_type: JS,
        body: include_str!("assets/main.js"),
    },
];

/// The file called `name`, if embedded.
pub fn get(name: &str) -> Option<&'static Asset> {
    ASSETS.iter().find(|a| a.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_loads_only_embedded_files() {
        let page = get("index.html").expect("index").body;
        for a in &ASSETS[1..] {
            assert!(page.contains(a.name), "index.html does not load {}", a.name);
        }
        // Nothing from elsewhere.
        for a in &ASSETS {
            assert!(!a.body.contains("http://"), "{} names a URL", a.name);
            assert!(!a.body.contains("https://"), "{} names a URL", a.name);
            assert!(!a.body.contains("//cdn"), "{} names a CDN", a.name);
        }
        assert!(get("../Cargo.toml").is_none());
    }
}
