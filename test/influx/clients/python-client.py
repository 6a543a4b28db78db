# Drives gridkeeper's InfluxDB 1.x door with the official 1.x Python client (Debian python3-influxdb), the way a
# script or gateway would: ping, write_points, queries with bind parameters and epoch, chunked queries, SHOW
# statements, errors.
# Usage: /usr/bin/python3 python-client.py HOST PORT TOKEN READ_ONLY_TOKEN BASE_SECONDS; prints one JSON document.
import json
import sys

from influxdb import InfluxDBClient
from influxdb.exceptions import InfluxDBClientError

host, port, token, read_only, base = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], int(sys.argv[5])
client = InfluxDBClient(host=host, port=port, username='gateway', password=token, database='site')
out = {'version': client.ping()}

points = []
for i in range(6):
    points.append({'measurement': 'py', 'tags': {'nodeId': 'n1', 'phase': 'L%d' % (i % 2 + 1)}, 'time': base + 10 * i, 'fields': {'power': 1.5 * i, 'count': i}})
    points.append({'measurement': 'py', 'tags': {'nodeId': 'n2'}, 'time': base + 10 * i, 'fields': {'power': 100.0 - i}})
out['written'] = client.write_points(points, time_precision='s', batch_size=5)

rng = 'time >= %ds AND time < %ds' % (base, base + 60)
out['raw'] = list(client.query('SELECT power, "count" FROM py WHERE "nodeId" = $node AND ' + rng, bind_params={'node': 'n1'}).get_points())
out['grouped'] = client.query('SELECT mean("power") FROM "py" WHERE ("nodeId" =~ /^(n1|n2)$/) AND %s GROUP BY time(20s), "nodeId" fill(null)' % rng, epoch='s').raw
out['selectors'] = list(client.query('SELECT max(power), min(power) FROM py WHERE ' + rng).get_points())
out['top'] = list(client.query('SELECT top(power, 2) FROM py WHERE "nodeId" = \'n1\' AND ' + rng, epoch='s').get_points())
out['databases'] = client.get_list_database()
out['measurements'] = client.get_list_measurements()
out['tag_values'] = list(client.query('SHOW TAG VALUES FROM py WITH KEY = "phase"').get_points())
out['field_keys'] = list(client.query('SHOW FIELD KEYS FROM py').get_points())
# chunked: one ResultSet per line the server sends
out['chunked'] = [rs.raw for rs in client.query('SELECT power FROM py WHERE %s GROUP BY "nodeId"' % rng, chunked=True, chunk_size=4, epoch='s')]
out['chunked_default'] = [list(rs.get_points()) for rs in client.query('SELECT power FROM py WHERE "nodeId" = \'n2\' AND ' + rng, chunked=True, epoch='s')]
out['chunked_several'] = [rs.raw for rs in client.query('SELECT count(power) FROM py WHERE %s; SHOW TAG KEYS FROM py' % rng, chunked=True, chunk_size=1)]
out['several'] = [list(r.get_points()) for r in client.query('SELECT count(power) FROM py WHERE %s; SELECT last(power) FROM py WHERE "nodeId" = \'n2\' AND %s' % (rng, rng), epoch='s')]

def error_of(fn):
    try:
        fn()
        return None
    except InfluxDBClientError as e:
        return [e.code, json.loads(e.content)['error'] if e.content.startswith('{') else e.content]

out['parse_error'] = error_of(lambda: client.query('SELECT FROM py'))
out['forbidden_write'] = error_of(lambda: client.write_points([{'measurement': 'py', 'tags': {'nodeId': 'unknown'}, 'fields': {'power': 1.0}}]))
out['bad_token'] = error_of(lambda: InfluxDBClient(host=host, port=port, username='x', password='gk_wrong', database='site').query('SHOW DATABASES'))
reader = InfluxDBClient(host=host, port=port, username='grafana', password=read_only, database='site')
out['read_only_write'] = error_of(lambda: reader.write_points([{'measurement': 'py', 'tags': {'nodeId': 'n1'}, 'fields': {'power': 1.0}}]))
out['read_only_query'] = list(reader.query('SELECT count(power) FROM py WHERE ' + rng).get_points())
print(json.dumps(out))
