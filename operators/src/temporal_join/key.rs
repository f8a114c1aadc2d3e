//! Join keys and SQL's NULL rule: a key with a NULL part never equals anything, NULL included.

/// A join key that may be (or contain) SQL NULL.
///
/// In every join of this crate (temporal, lookup) a key for which [`JoinKey::is_null`] holds
/// never matches a build version, not even one with an equal NULL key (SQL's rule; Flink's
/// temporal join matches NULL to NULL, a deliberate difference): INNER drops the probe row,
/// LEFT pads it, and neither reports it as an error. Deduplication and the merge engines do not
/// use this trait: there NULL is a key value like any other.
///
/// Implemented for `Option<T>` (`None` is NULL), for sequences and tuples of join keys (NULL if
/// any part is), and for the plain scalar types (never NULL).
///
/// # Examples
///
/// ```
/// use differential_temporal_operators::temporal_join::JoinKey;
///
/// assert!(None::<u8>.is_null());
/// assert!(!Some(3u8).is_null());
/// assert!(vec![Some("a".to_string()), None].is_null());
/// assert!(!(1u8, "a").is_null());
/// ```
pub trait JoinKey {
    /// `true` iff the key is NULL or has a NULL part.
    fn is_null(&self) -> bool;
}

impl<T: JoinKey> JoinKey for Option<T> {
    fn is_null(&self) -> bool {
        self.as_ref().is_none_or(JoinKey::is_null)
    }
}

impl<T: JoinKey> JoinKey for Vec<T> {
    fn is_null(&self) -> bool {
        self.iter().any(JoinKey::is_null)
    }
}

impl<T: JoinKey + ?Sized> JoinKey for &T {
    fn is_null(&self) -> bool {
        (**self).is_null()
    }
}

macro_rules! never_null {
    ($($t:ty),*) => {
        $(impl JoinKey for $t {
            fn is_null(&self) -> bool {
                false
            }
        })*
    };
}

never_null!(
    (),
    bool,
    char,
    u8,
    u16,
    u32,
    u64,
    u128,
    usize,
    i8,
    i16,
    i32,
    i64,
    i128,
    isize,
    String,
    str
);

macro_rules! tuple_key {
    ($($name:ident),+) => {
        impl<$($name: JoinKey),+> JoinKey for ($($name,)+) {
            #[allow(non_snake_case)]
            fn is_null(&self) -> bool {
                let ($($name,)+) = self;
                false $(|| $name.is_null())+
            }
        }
    };
}

tuple_key!(A);
tuple_key!(A, B);
tuple_key!(A, B, C);
tuple_key!(A, B, C, D);
