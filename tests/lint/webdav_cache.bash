# Sourced by tests/lint/remote_cache_test.sh and tests/bench/lint_remote_bench.sh: a standard HTTP
# cache for Bazel (--remote_cache=http://127.0.0.1:PORT) from Debian's nginx, WebDAV PUT into a
# folder.
#
#   webdav_cache_start DIR     starts nginx serving DIR/cache; sets WEBDAV_PORT and WEBDAV_PID,
#                              returns when the server stores and returns a PUT (1 when it cannot)
#   webdav_cache_stop          stops it

webdav_cache_start() {
  local dir=$1 nginx
  nginx=$(command -v nginx || true)
  [ -z "$nginx" ] && [ -x /usr/sbin/nginx ] && nginx=/usr/sbin/nginx
  if [ -z "$nginx" ]; then
    echo "webdav_cache: nginx is not installed (tools/setup.sh installs nginx-light)" >&2
    return 1
  fi
  WEBDAV_PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  mkdir -p "$dir/cache" "$dir/body" "$dir/logs"
  local user_line=""
  [ "$(id -u)" = 0 ] && user_line="user root;"
  cat > "$dir/nginx.conf" <<CONF
$user_line
daemon off;
master_process off;
pid $dir/nginx.pid;
error_log $dir/logs/error.log;
events { worker_connections 256; }
http {
  access_log off;
  client_body_temp_path $dir/body;
  proxy_temp_path $dir/body;
  fastcgi_temp_path $dir/body;
  uwsgi_temp_path $dir/body;
  scgi_temp_path $dir/body;
  server {
    listen 127.0.0.1:$WEBDAV_PORT;
    root $dir/cache;
    client_max_body_size 0;
    location / {
      dav_methods PUT;
      create_full_put_path on;
    }
  }
}
CONF
  "$nginx" -p "$dir" -c "$dir/nginx.conf" 2>"$dir/logs/stderr" &
  WEBDAV_PID=$!
  local i
  for i in $(seq 100); do
    python3 -c "import socket; socket.create_connection(('127.0.0.1', $WEBDAV_PORT), 0.2)" 2>/dev/null && break
    if ! kill -0 "$WEBDAV_PID" 2>/dev/null; then
      echo "webdav_cache: nginx did not start: $(cat "$dir/logs/stderr" "$dir/logs/error.log" 2>/dev/null)" >&2
      return 1
    fi
    python3 -c 'import time; time.sleep(0.1)'
  done
  # Bazel's HTTP cache protocol: a PUT is stored and a GET gives it back.
  python3 - "$WEBDAV_PORT" <<'PY' || { echo "webdav_cache: the server does not store a PUT" >&2; return 1; }
import sys, urllib.request
url = "http://127.0.0.1:%s/cas/probe" % sys.argv[1]
urllib.request.urlopen(urllib.request.Request(url, data=b"tether", method="PUT")).read()
assert urllib.request.urlopen(url).read() == b"tether"
PY
}

webdav_cache_stop() {
  if [ -n "${WEBDAV_PID:-}" ]; then
    kill "$WEBDAV_PID" 2>/dev/null || true
    wait "$WEBDAV_PID" 2>/dev/null || true
  fi
}
