# What a user would write without rxs: the records listing on stdin, the KT revision
# (GET /kt/{revision_id}) in $kt, out comes CSV with one column per form field, named by the
# schema's semantic name: properties["service-key"], else the label, else the form key.
#
#   curl -s -H "X-API-Key: $KEY" "$URL/records/?context__knowledge_unit_topic_id=$REV" \
#     | jq -r --slurpfile kt kt.json -f records-to-csv.jq > records.csv
($kt[0].knowledge_topic_schema.components
  | map(select(.key != null and .key != ""))
  | map({key, name: ((.properties // {})["service-key"] // .label // .key)})) as $fields
| (["_id", "name", "version"] + ($fields | map(.name))),
  (.[] | . as $r
    | [$r._id, $r.name, $r.version]
      + ($fields | map($r.data[.key]
          | if type == "array" then map(tostring) | join("; ")
            elif . == null then ""
            else tostring end)))
| @csv
