//! The sub-configs a composite config class builds from its defaults: AutoConfig's view of a
//! config.json that leaves `vision_config`, `audio_config` or `text_config` out (or null), or
//! gives one without some of its keys.
//!
//! The values are data of the family files (each lists its composite classes and their
//! sub-config classes, [`ConfigClasses`]); this module only looks them up. A composite class
//! builds a missing sub-config as its own sub-config class with every default, `model_type`
//! included, which is what the reference then reads (`AutoConfig.from_pretrained(...)
//! .to_dict()`): the tower's sizes for `--mmproj`, the text model's width for
//! `clip.*.projection_dim`.

use serde_json::{Map, Value as Json};

use super::ConfigValue;

/// Sub-config classes (a tower's or the text model's config) and the transformers 5 defaults
/// of the keys the converter reads.
pub(super) struct SubConfigClass {
    /// The classes' `model_type`s (classes with the same defaults share a row).
    pub model_types: &'static [&'static str],
    /// The defaults.
    pub values: &'static [(&'static str, ConfigValue)],
}

/// A composite config class (config.json's `model_type`) and the sub-config classes it
/// builds when config.json has none of them.
pub(super) struct CompositeClass {
    /// The composite class's `model_type`.
    pub model_type: &'static str,
    /// (`vision_config` / `audio_config` / `text_config`, the `model_type` of the class it
    /// builds there).
    pub builds: &'static [(&'static str, &'static str)],
}

/// One family file's config classes.
pub(super) struct ConfigClasses {
    /// Its composite classes.
    pub composites: &'static [CompositeClass],
    /// The defaults of their sub-config classes (those another table does not give).
    pub sub_configs: &'static [SubConfigClass],
}

/// Every family file's config classes.
static FAMILIES: &[&ConfigClasses] = &[
    &super::qwenvl::CONFIG_CLASSES,
    &super::glm4v::CONFIG_CLASSES,
    &super::gemma3::CONFIG_CLASSES,
    &super::smolvlm::CONFIG_CLASSES,
    &super::whisper::CONFIG_CLASSES,
    &super::janus::CONFIG_CLASSES,
    &super::minicpmv46::CONFIG_CLASSES,
    &super::exaone4_5::CONFIG_CLASSES,
    &super::minimax_m3::CONFIG_CLASSES,
    &super::step3vl::CONFIG_CLASSES,
    &super::granite_speech::CONFIG_CLASSES,
];

/// The class the composite class of config `raw` builds for sub-config `key`.
fn built_class(raw: &Json, key: &str) -> Option<&'static str> {
    let composite = raw.get("model_type").and_then(Json::as_str)?;
    FAMILIES
        .iter()
        .flat_map(|f| f.composites.iter())
        .find(|c| c.model_type == composite)?
        .builds
        .iter()
        .find(|(k, _)| *k == key)
        .map(|(_, class)| *class)
}

/// The defaults of sub-config class `model_type`, if a family file gives them.
fn class_defaults(model_type: &str) -> Option<&'static [(&'static str, ConfigValue)]> {
    FAMILIES
        .iter()
        .flat_map(|f| f.sub_configs.iter())
        .find(|s| s.model_types.contains(&model_type))
        .map(|s| s.values)
}

/// Sub-config `key` as the composite class of config `raw` builds it when config.json has
/// none (absent or null): its class's `model_type` and defaults. `None` when config.json has
/// one, or the class builds none there.
pub(super) fn built(raw: &Json, key: &str) -> Option<Map<String, Json>> {
    if raw.get(key).is_some_and(|v| !v.is_null()) {
        return None;
    }
    let class = built_class(raw, key)?;
    let mut sub = Map::new();
    sub.insert("model_type".into(), Json::from(class));
    fill(raw, key, &mut sub);
    Some(sub)
}

/// Fills the keys sub-config `sub` (config `raw`'s `key`) lacks with its class's defaults:
/// the class its `model_type` names, else the one the composite class builds there.
pub(super) fn fill(raw: &Json, key: &str, sub: &mut Map<String, Json>) {
    let class = sub
        .get("model_type")
        .and_then(Json::as_str)
        .map(str::to_string)
        .or_else(|| built_class(raw, key).map(str::to_string));
    let Some(values) = class.as_deref().and_then(class_defaults) else {
        return;
    };
    for (k, v) in values {
        sub.entry(k.to_string()).or_insert_with(|| v.to_json());
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn every_built_class_has_defaults_and_no_class_is_listed_twice() {
        let mut composites = std::collections::HashSet::new();
        let mut classes = std::collections::HashSet::new();
        for f in FAMILIES {
            for c in f.composites {
                assert!(composites.insert(c.model_type), "{} twice", c.model_type);
            }
            for s in f.sub_configs {
                for t in s.model_types {
                    assert!(classes.insert(*t), "{t} twice");
                }
            }
        }
        for f in FAMILIES {
            for c in f.composites {
                for (key, class) in c.builds {
                    assert!(
                        [
                            "vision_config",
                            "audio_config",
                            "text_config",
                            "encoder_config"
                        ]
                        .contains(key),
                        "{}: {key}",
                        c.model_type
                    );
                    let raw = json!({ "model_type": c.model_type });
                    let sub = built(&raw, key).expect("built");
                    assert_eq!(sub["model_type"], json!(class));
                    // The tower tables of the projector module give the rest.
                    let _ = class_defaults(class);
                }
            }
        }
    }

    #[test]
    fn a_sub_config_of_the_file_is_kept_and_only_filled() {
        let composite = FAMILIES
            .iter()
            .flat_map(|f| f.composites.iter())
            .find(|c| c.builds.iter().any(|(_, t)| class_defaults(t).is_some()))
            .expect("a composite class with defaults");
        let (key, class) = composite
            .builds
            .iter()
            .find(|(_, t)| class_defaults(t).is_some())
            .unwrap();
        let defaults = class_defaults(class).unwrap();
        let (first, _) = defaults[0];
        let raw = json!({ "model_type": composite.model_type, *key: { first: "file" } });
        assert!(built(&raw, key).is_none(), "config.json has it");
        let mut sub = raw[*key].as_object().unwrap().clone();
        fill(&raw, key, &mut sub);
        assert_eq!(sub[first], json!("file"));
        assert_eq!(
            sub.len(),
            defaults.len(),
            "every default filled, none twice"
        );
        let null = json!({ "model_type": composite.model_type, *key: null });
        assert_eq!(built(&null, key).unwrap()["model_type"], json!(class));
        let other = json!({ "model_type": "no-such-class" });
        assert!(built(&other, key).is_none());
    }
}
