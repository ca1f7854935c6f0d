//! The enums whose values are fixed wire spellings (the config's modes, a request's choices).

/// Declares an enum of wire names, the full value list and parsing.
macro_rules! wire_enum {
    ($(#[$doc:meta])* $name:ident {
        $($(#[doc = $vdoc:literal])* $variant:ident = $wire:literal),+ $(,)?
    }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, ::serde::Serialize, ::serde::Deserialize)]
        pub enum $name {
            $($(#[doc = $vdoc])* #[serde(rename = $wire)] $variant),+
        }

        impl $name {
            /// Every value, in the order of the design.
            pub const ALL: &'static [Self] = &[$(Self::$variant),+];
            /// Every wire spelling, in the order of [`Self::ALL`].
            pub const NAMES: &'static [&'static str] = &[$($wire),+];
            /// What each value means (its documentation), in the order of [`Self::ALL`].
            pub const MEANINGS: &'static [&'static str] = &[$(concat!($($vdoc),*).trim_ascii()),+];

            /// The wire spelling.
            pub fn as_str(self) -> &'static str {
                match self { $(Self::$variant => $wire),+ }
            }

            /// Parses the exact wire spelling.
            pub fn from_wire(s: &str) -> Option<Self> {
                match s { $($wire => Some(Self::$variant),)+ _ => None }
            }
        }

        /// A string whose values are exactly [`Self::NAMES`], the list the validator checks.
        impl ::schemars::JsonSchema for $name {
            fn schema_name() -> ::std::borrow::Cow<'static, str> {
                ::std::borrow::Cow::Borrowed(stringify!($name))
            }

            fn json_schema(_: &mut ::schemars::SchemaGenerator) -> ::schemars::Schema {
                schemars::json_schema!({ "type": "string", "enum": Self::NAMES })
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}
