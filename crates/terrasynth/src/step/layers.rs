//! [`Layers`]: the derived layers a [`Terrain`](super::Terrain) carries besides its heights,
//! one value per type, keyed by the type itself.
//!
//! The carrier sits below every stage, so it cannot name a stage's types. A stage that leaves
//! a layer for later steps and outputs (the hydrology steps leave
//! `hydro::HydroLayers`) stores it here under its own type and reads it back by type:
//! `terrain.layers.get::<HydroLayers>()`. No string keys, no downcasting at the call sites,
//! and a stage added later needs no change here.
//!
//! ```
//! use terrasynth::step::Layers;
//! #[derive(Clone, Debug, Default, PartialEq)]
//! struct Marks(Vec<u32>);
//! let mut layers = Layers::default();
//! assert!(layers.get::<Marks>().is_none());
//! layers.get_or_default::<Marks>().0.push(7);
//! assert_eq!(layers.get::<Marks>(), Some(&Marks(vec![7])));
//! let copy = layers.clone();
//! assert_eq!(layers.remove::<Marks>(), Some(Marks(vec![7])));
//! assert_eq!(copy.get::<Marks>(), Some(&Marks(vec![7])));
//! ```

use std::any::{Any, TypeId};
use std::collections::BTreeMap;
use std::fmt;

/// A value [`Layers`] can hold: any `Clone + Debug` type that can cross threads.
pub trait Layer: Any + Send + Sync + fmt::Debug {
    /// A boxed copy (so [`Layers`] is `Clone`).
    fn clone_layer(&self) -> Box<dyn Layer>;
    /// As `Any`, to read the value back by type.
    fn as_any(&self) -> &dyn Any;
    /// As mutable `Any`.
    fn as_any_mut(&mut self) -> &mut dyn Any;
    /// As boxed `Any`, to take the value out.
    fn into_any(self: Box<Self>) -> Box<dyn Any>;
}

impl<T: Any + Send + Sync + fmt::Debug + Clone> Layer for T {
    fn clone_layer(&self) -> Box<dyn Layer> {
        Box::new(self.clone())
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
    fn into_any(self: Box<Self>) -> Box<dyn Any> {
        self
    }
}

/// Derived layers of a terrain, at most one per type (module docs).
#[derive(Default)]
pub struct Layers {
    map: BTreeMap<TypeId, Box<dyn Layer>>,
}

impl Layers {
    /// The layer of type `T`, if a step stored one.
    pub fn get<T: Layer>(&self) -> Option<&T> {
        self.map.get(&TypeId::of::<T>()).and_then(|l| l.as_ref().as_any().downcast_ref())
    }

    /// The layer of type `T`, mutable.
    pub fn get_mut<T: Layer>(&mut self) -> Option<&mut T> {
        self.map.get_mut(&TypeId::of::<T>()).and_then(|l| l.as_mut().as_any_mut().downcast_mut())
    }

    /// The layer of type `T`, inserting `T::default()` first if there is none.
    pub fn get_or_default<T: Layer + Default>(&mut self) -> &mut T {
        let slot = self.map.entry(TypeId::of::<T>()).or_insert_with(|| Box::new(T::default()));
        match slot.as_mut().as_any_mut().downcast_mut() {
            Some(t) => t,
            None => unreachable!("Layers: the value under TypeId::of::<T>() is always a T"),
        }
    }

    /// Stores `value`, returning the layer of the same type it replaces.
    pub fn insert<T: Layer>(&mut self, value: T) -> Option<T> {
        self.map
            .insert(TypeId::of::<T>(), Box::new(value))
            .and_then(|old| old.into_any().downcast().ok())
            .map(|b| *b)
    }

    /// Takes the layer of type `T` out.
    pub fn remove<T: Layer>(&mut self) -> Option<T> {
        self.map.remove(&TypeId::of::<T>()).and_then(|old| old.into_any().downcast().ok()).map(|b| *b)
    }

    /// Whether no layer is stored.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}

impl Clone for Layers {
    fn clone(&self) -> Self {
        Self { map: self.map.iter().map(|(k, v)| (*k, v.as_ref().clone_layer())).collect() }
    }
}

impl fmt::Debug for Layers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.map.values()).finish()
    }
}
