/**
 * The payload filter, evaluated by the fan-out statement itself (`../outbox-writes.ts`), so an
 * event, its sequence and its filtered deliveries stay one statement and one round trip: the
 * fan-out calls `holdfast_filter_match(e.filter, payload::jsonb)` for each subscribed endpoint
 * that has a filter. Re-applied like `LEASE_FUNCTION` when this text changes.
 *
 * Semantics (the package README, "Filters"): a path that is absent never equals anything (not
 * even `null`), so `$ne`, `$nin` and `$not` match it; `$gt`, `$gte`, `$lt`, `$lte` compare
 * numbers with numbers and strings with strings (by Unicode code point: `collate "C"` is UTF-8
 * byte order), and anything else does not match; equality is JSON equality (numbers by value,
 * objects whatever their key order, arrays element by element). A path segment of digits
 * indexes an array; any other segment names an object's key.
 */
export const MATCH_FILTER_FUNCTION = `
create or replace function holdfast_filter_value(p_doc jsonb, p_path text)
returns jsonb
language plpgsql immutable strict parallel safe
as $fn$
declare
  cur jsonb := p_doc;
  seg text;
begin
  foreach seg in array string_to_array(p_path, '.') loop
    if jsonb_typeof(cur) = 'object' then
      cur := cur -> seg;
    elsif jsonb_typeof(cur) = 'array' and seg ~ '^(0|[1-9][0-9]{0,8})$' then
      cur := cur -> seg::int;
    else
      return null;
    end if;
    if cur is null then
      return null;
    end if;
  end loop;
  return cur;
end
$fn$;

create or replace function holdfast_filter_compare(p_value jsonb, p_op text, p_arg jsonb)
returns boolean
language sql immutable parallel safe
as $fn$
  select case
    when jsonb_typeof(p_value) = 'number' and jsonb_typeof(p_arg) = 'number' then
      case p_op
        when '$gt' then p_value::numeric > p_arg::numeric
        when '$gte' then p_value::numeric >= p_arg::numeric
        when '$lt' then p_value::numeric < p_arg::numeric
        else p_value::numeric <= p_arg::numeric
      end
    when jsonb_typeof(p_value) = 'string' and jsonb_typeof(p_arg) = 'string' then
      case p_op
        when '$gt' then (p_value #>> '{}') collate "C" > (p_arg #>> '{}') collate "C"
        when '$gte' then (p_value #>> '{}') collate "C" >= (p_arg #>> '{}') collate "C"
        when '$lt' then (p_value #>> '{}') collate "C" < (p_arg #>> '{}') collate "C"
        else (p_value #>> '{}') collate "C" <= (p_arg #>> '{}') collate "C"
      end
    else false
  end
$fn$;

create or replace function holdfast_filter_match(p_filter jsonb, p_doc jsonb)
returns boolean
language plpgsql immutable parallel safe
as $fn$
declare
  k text;
  want jsonb;
  op text;
  arg jsonb;
  v jsonb;
  sub jsonb;
  found boolean;
begin
  for k, want in select key, value from jsonb_each(p_filter) loop
    if k = '$and' then
      for sub in select value from jsonb_array_elements(want) loop
        if not holdfast_filter_match(sub, p_doc) then
          return false;
        end if;
      end loop;
    elsif k = '$or' then
      found := false;
      for sub in select value from jsonb_array_elements(want) loop
        if holdfast_filter_match(sub, p_doc) then
          found := true;
          exit;
        end if;
      end loop;
      if not found then
        return false;
      end if;
    elsif k = '$not' then
      if holdfast_filter_match(want, p_doc) then
        return false;
      end if;
    else
      v := holdfast_filter_value(p_doc, k);
      if jsonb_typeof(want) = 'object' and exists (select from jsonb_object_keys(want) o where o like '$%') then
        for op, arg in select key, value from jsonb_each(want) loop
          if not coalesce(case op
            when '$eq' then v = arg
            when '$ne' then v is null or v <> arg
            when '$in' then exists (select from jsonb_array_elements(arg) x where x.value = v)
            when '$nin' then v is null or not exists (select from jsonb_array_elements(arg) x where x.value = v)
            when '$exists' then (v is not null) = (arg = 'true'::jsonb)
            when '$gt' then holdfast_filter_compare(v, op, arg)
            when '$gte' then holdfast_filter_compare(v, op, arg)
            when '$lt' then holdfast_filter_compare(v, op, arg)
            when '$lte' then holdfast_filter_compare(v, op, arg)
            else false
          end, false) then
            return false;
          end if;
        end loop;
      elsif v is null or v <> want then
        return false;
      end if;
    end if;
  end loop;
  return true;
end
$fn$;
`;
