//! The open type of diagnostic codes: [`Code`] is a name with its severity, the references
//! that can reject a file for it and a summary; each crate declares its own codes, in one list,
//! with [`diagnostic_codes!`](crate::diagnostic_codes) (the container's are in
//! [`codes`](super::codes)). The list feeds the crate's checks, its tests and its README's
//! table ([`readme_table`]).

use std::fmt;
use std::hash::{Hash, Hasher};

use super::{References, Severity};

/// A diagnostic's stable identifier; never reused for another meaning. Two codes are equal
/// when their names are.
///
/// It prints as its name (`duplicate-key`) and compares equal to it:
///
/// ```
/// use gguf_grammar::validate::{codes, Reference, Severity};
///
/// let code = codes::DUPLICATE_KEY;
/// assert_eq!(code, "duplicate-key");
/// assert_eq!(code.to_string(), "duplicate-key");
/// assert_eq!(code.severity(), Severity::Error);
/// assert!(code.rejected_by().contains(Reference::GgufPy));
/// assert!(codes::ALL.contains(&codes::TENSOR_GAP));
/// ```
#[derive(Clone, Copy)]
pub struct Code {
    name: &'static str,
    severity: Severity,
    rejected_by: References,
    summary: &'static str,
    /// Its place in its crate's list, which orders codes.
    place: u16,
}

impl Code {
    /// A code: its stable name, its severity, the container references that can reject a file
    /// for it, and what the rule is in a sentence. A crate declares its codes with
    /// [`diagnostic_codes!`](crate::diagnostic_codes), which takes the summary from the doc.
    pub const fn new(
        name: &'static str,
        severity: Severity,
        rejected_by: References,
        summary: &'static str,
    ) -> Code {
        Code {
            name,
            severity,
            rejected_by,
            summary,
            place: 0,
        }
    }

    /// The code at place `place` of its crate's list: codes order by place, then name
    /// ([`diagnostic_codes!`](crate::diagnostic_codes) numbers its list).
    pub const fn listed_at(self, place: u16) -> Code {
        Code { place, ..self }
    }

    /// Its stable name, e.g. `duplicate-key`.
    pub const fn name(self) -> &'static str {
        self.name
    }

    /// Its severity. A diagnostic that a reference rejects for is always an error.
    pub const fn severity(self) -> Severity {
        self.severity
    }

    /// The container references that can reject a file for it (which of them do may depend
    /// on the case, as when ggml and gguf-py read different keys); empty for notes, warnings,
    /// and the model and shard-set rules.
    pub const fn rejected_by(self) -> References {
        self.rejected_by
    }

    /// What the rule is, in a sentence.
    pub fn summary(self) -> &'static str {
        self.summary.trim()
    }

    /// The code of `list` named `name`, if there is one.
    ///
    /// ```
    /// use gguf_grammar::validate::{codes, Code};
    /// assert_eq!(Code::find(codes::ALL, "duplicate-key"), Some(codes::DUPLICATE_KEY));
    /// assert_eq!(Code::find(codes::ALL, "no-such-code"), None);
    /// ```
    pub fn find(list: &[Code], name: &str) -> Option<Code> {
        list.iter().copied().find(|code| code.name == name)
    }
}

impl PartialEq for Code {
    fn eq(&self, other: &Code) -> bool {
        self.name == other.name
    }
}

impl Eq for Code {}

impl Hash for Code {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.name.hash(state);
    }
}

impl PartialOrd for Code {
    fn partial_cmp(&self, other: &Code) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Code {
    fn cmp(&self, other: &Code) -> std::cmp::Ordering {
        (self.place, self.name).cmp(&(other.place, other.name))
    }
}

impl fmt::Debug for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Code({:?})", self.name)
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name)
    }
}

impl PartialEq<str> for Code {
    fn eq(&self, name: &str) -> bool {
        self.name == name
    }
}

impl PartialEq<&str> for Code {
    fn eq(&self, name: &&str) -> bool {
        self.name == *name
    }
}

/// Declares a crate's diagnostic codes: one `const` [`Code`](crate::validate::Code) per
/// entry, its doc comment the code's summary, and `ALL`, every code in the list's order.
///
/// ```
/// mod codes {
///     use gguf_grammar::validate::References;
///     gguf_grammar::diagnostic_codes! {
///         /// A model without a name.
///         NAME_MISSING = "name-missing", Warning, References::NONE;
///     }
/// }
/// assert_eq!(codes::ALL, [codes::NAME_MISSING]);
/// assert_eq!(codes::NAME_MISSING.summary(), "A model without a name.");
/// ```
#[macro_export]
macro_rules! diagnostic_codes {
    ($($(#[doc = $doc:literal])+ $code:ident = $name:literal, $severity:ident, $rejected_by:expr;)+) => {
        $crate::diagnostic_codes!(@at 0; $($(#[doc = $doc])+ $code = $name, $severity, $rejected_by;)+);
        /// Every code of the list, in its order.
        pub const ALL: &[$crate::validate::Code] = &[$($code),+];
    };
    (@at $place:expr; $(#[doc = $doc:literal])+ $code:ident = $name:literal, $severity:ident, $rejected_by:expr; $($rest:tt)*) => {
        $(#[doc = $doc])+
        pub const $code: $crate::validate::Code = $crate::validate::Code::new(
            $name,
            $crate::validate::Severity::$severity,
            $rejected_by,
            concat!($($doc),+),
        )
        .listed_at($place);
        $crate::diagnostic_codes!(@at $place + 1; $($rest)*);
    };
    (@at $place:expr;) => {};
}

/// The Markdown table of `codes` a README holds between `<!-- codes -->` and
/// `<!-- /codes -->`: code, severity, rejecting references, rule.
pub fn readme_table(codes: &[Code]) -> String {
    let mut out = String::from("| code | severity | rejected by | rule |\n|---|---|---|---|\n");
    for &code in codes {
        let refs: Vec<&str> = code.rejected_by().iter().map(|r| r.name()).collect();
        let refs = if refs.is_empty() {
            "-".to_string()
        } else {
            refs.join(", ")
        };
        out += &format!(
            "| `{code}` | {} | {refs} | {} |\n",
            code.severity().name(),
            code.summary().replace('|', "\\|")
        );
    }
    out
}

/// Whether a crate's code list is sound and its README lists it: every name used once, every
/// code with a summary, and the table between `<!-- codes -->` and `<!-- /codes -->` in
/// `readme` equal to [`readme_table`] of the list. The error says what is wrong, with the
/// table the README should hold. Each crate that declares codes calls it from a test.
///
/// ```
/// use gguf_grammar::validate::{check_code_list, codes, readme_table};
///
/// let readme = format!("# Codes\n<!-- codes -->\n{}<!-- /codes -->\n", readme_table(codes::ALL));
/// assert_eq!(check_code_list(codes::ALL, &readme), Ok(()));
/// assert!(check_code_list(codes::ALL, "no table").is_err());
/// ```
pub fn check_code_list(codes: &[Code], readme: &str) -> Result<(), String> {
    let mut names: Vec<&str> = codes.iter().map(|c| c.name()).collect();
    names.sort_unstable();
    if let Some(twice) = names.windows(2).find(|w| w[0] == w[1]) {
        return Err(format!("the code `{}` is listed twice", twice[0]));
    }
    if let Some(code) = codes.iter().find(|c| c.summary().is_empty()) {
        return Err(format!("the code `{code}` has no summary"));
    }
    let expected = readme_table(codes);
    let open = "<!-- codes -->\n";
    let found = readme.find(open).and_then(|start| {
        let start = start + open.len();
        let end = start + readme[start..].find("<!-- /codes -->")?;
        Some(&readme[start..end])
    });
    if found == Some(expected.as_str()) {
        Ok(())
    } else {
        Err(format!(
            "the README's code table (between <!-- codes --> and <!-- /codes -->) is not the code list; it should hold:\n{expected}"
        ))
    }
}
