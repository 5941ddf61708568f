-- data: image URLs are kept in a task only while it can still run: a final task keeps a short note in
-- their place, so inline inputs (up to the request body limit each task) do not stay in the database
-- forever (docs/security.md#bounds). Every statement that makes a task final applies this function.
CREATE FUNCTION without_inline_inputs(urls jsonb) RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$
    SELECT coalesce(jsonb_agg(CASE WHEN lower(left(u, 5)) = 'data:'
                                   THEN to_jsonb('data:… (' || octet_length(u) ||
                                                 ' bytes, dropped when the task finished)')
                                   ELSE to_jsonb(u) END ORDER BY n), '[]'::jsonb)
    FROM jsonb_array_elements_text(urls) WITH ORDINALITY AS e(u, n)
$$;

UPDATE tasks SET image_urls = without_inline_inputs(image_urls)
WHERE status IN (3, 4) AND image_urls::text ILIKE '%"data:%';
