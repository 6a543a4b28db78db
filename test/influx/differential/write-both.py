# Writes the same points to two InfluxDB 1.x servers through the official Python client: real InfluxDB (where each
# database is created first) and gridkeeper (where it appears with its first write).
# Usage: /usr/bin/python3 write-both.py POINTS_JSON INFLUX_PORT GRIDKEEPER_PORT TOKEN
# POINTS_JSON: {"floatFields": [...], "retentionPolicies": [...], "databases": {"name": [points, time in ms], ...}}: each
# database's points go to its autogen retention policy and to each one listed
import json
import sys

from influxdb import InfluxDBClient

data = json.load(open(sys.argv[1]))
floats = set(data['floatFields'])
influx = InfluxDBClient(host='127.0.0.1', port=int(sys.argv[2]))
gridkeeper = InfluxDBClient(host='127.0.0.1', port=int(sys.argv[3]), username='diff', password=sys.argv[4])
for database, points in data['databases'].items():
    # JSON has one number type: float fields must stay floats even when a value is whole (12.0), or InfluxDB sees integers
    for p in points:
        for k in floats:
            if k in p['fields']:
                p['fields'][k] = float(p['fields'][k])
    influx.create_database(database)
    for rp in data['retentionPolicies']:
        influx.create_retention_policy(rp, 'INF', 1, database=database)
    for rp in [None] + data['retentionPolicies']:
        for client in (influx, gridkeeper):
            assert client.write_points(points, time_precision='ms', batch_size=2000, database=database, retention_policy=rp)
print('ok')
