//! Which language a kernel's source is written in, as syntect names it:
//! what the TUI's highlighter and the HTML page both need to know.

/// The syntect syntax for a kernel source: Triton kernels are Python, C++
/// kernels C++; empty when neither.
pub fn syntax_name(lang: &str, text: &str) -> &'static str {
    match lang {
        "python" => "Python",
        "cpp" | "cuda" | "c++" => "C++",
        _ if text.contains("@triton.jit") => "Python",
        _ if text.contains("extern \"C\"") || text.contains("#include") => "C++",
        _ => "",
    }
}
