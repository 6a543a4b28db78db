# Writes the same points to two InfluxDB 1.x servers through the official Python client: real InfluxDB (where the
# database is created first) and gridkeeper (where it appears with its first write).
# Usage: /usr/bin/python3 write-both.py POINTS_JSON INFLUX_PORT GRIDKEEPER_PORT TOKEN
import json
import sys

from influxdb import InfluxDBClient

points = json.load(open(sys.argv[1]))
# JSON has one number type: float fields must stay floats even when a value is whole (12.0), or InfluxDB sees integers
for p in points:
    for k in ('power', 'volts', 'temp'):
        if k in p['fields']:
            p['fields'][k] = float(p['fields'][k])
influx = InfluxDBClient(host='127.0.0.1', port=int(sys.argv[2]), database='site')
influx.create_database('site')
gridkeeper = InfluxDBClient(host='127.0.0.1', port=int(sys.argv[3]), username='diff', password=sys.argv[4], database='site')
for client in (influx, gridkeeper):
    assert client.write_points(points, time_precision='s', batch_size=2000)
print('ok')
