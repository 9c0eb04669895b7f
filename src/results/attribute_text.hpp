// Purpose: the text forms of attribute values: UTC time stamps (doubles: platform/number_text.hpp) and a
// configuration's attributes as the reader's ConfigurationResults::attribute_text gives them (what --resume and
// mgpu_analyze compare).
#pragma once

#include <map>
#include <string>

#include "platform/number_text.hpp"  // shortest_double_text: the form of floating-point attribute texts
#include "results/results_schema.hpp"

namespace mgpu {

// Now, as ISO 8601 UTC with a "Z" suffix ("2025-01-31T12:00:00Z"): the form of every *_utc attribute.
std::string utc_timestamp_now();

// The configuration's attributes as text, formatted as the reader's ConfigurationResults::attribute_text (strings as
// they are, integers exactly, floats by shortest_double_text, arrays joined by ","). attribute_texts of a default
// ConfigurationMetadata gives the texts a file lacking an attribute added after schema_version 1 implies.
std::map<std::string, std::string> attribute_texts(const results_schema::ConfigurationMetadata& metadata);

}  // namespace mgpu
