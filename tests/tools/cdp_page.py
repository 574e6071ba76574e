#!/usr/bin/env python3
# cdp_page.py CHROMIUM URL DONE_JS TIMEOUT_S: opens URL in headless
# Chromium, driven by the DevTools protocol over --remote-debugging-pipe
# (no port to open), waits until the JavaScript expression DONE_JS is true
# or a dialog opened (polled, at most TIMEOUT_S: a bound, not a measure),
# and prints the DOM.  Every console message, uncaught exception and
# dialog goes to stderr as "CONSOLE: TYPE: ...", "Uncaught ...",
# "ALERT: ...".  Exit 1 on the timeout or when Chromium fails.
# (--dump-dom with --virtual-time-budget dumped a virtualised table before
# it had drawn its rows, now and then: the page says when it is done.)
import json, os, select, subprocess, sys, tempfile, time

chromium, url, done, limit = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
prof = tempfile.mkdtemp(prefix='cdp-profile.')
to_r, to_w = os.pipe()     # us -> chromium (its fd 3)
from_r, from_w = os.pipe() # chromium -> us (its fd 4)


def child():
    os.dup2(to_r, 3)
    os.dup2(from_w, 4)


p = subprocess.Popen([chromium, '--headless', '--no-sandbox', '--enable-unsafe-swiftshader',
                      '--remote-debugging-pipe', '--user-data-dir=' + prof,
                      '--window-size=1600,12000', 'about:blank'],
                     preexec_fn=child, pass_fds=(3, 4), stdout=subprocess.DEVNULL,
                     stderr=subprocess.DEVNULL)
os.close(to_r)
os.close(from_w)
buf = b''
seq = 0
deadline = time.monotonic() + limit


def log(s):
    sys.stderr.write(s.replace('\n', ' ') + '\n')


def event(m):
    meth, par = m.get('method'), m.get('params', {})
    if meth == 'Runtime.consoleAPICalled':
        log('CONSOLE: %s: %s' % (par['type'], ' '.join(
            str(a.get('value', a.get('description', ''))) for a in par.get('args', []))))
    elif meth == 'Runtime.exceptionThrown':
        d = par['exceptionDetails']
        log('Uncaught %s' % d.get('exception', {}).get('description', d.get('text')))
    elif meth == 'Page.javascriptDialogOpening':
        global alerted
        alerted = True
        log('ALERT: %s' % par.get('message'))
        send('Page.handleJavaScriptDialog', {'accept': True}, m.get('sessionId'), wait=False)


def send(method, params=None, session=None, wait=True):
    global seq, buf
    seq += 1
    my = seq
    msg = {'id': my, 'method': method, 'params': params or {}}
    if session:
        msg['sessionId'] = session
    os.write(to_w, json.dumps(msg).encode() + b'\0')
    while wait:
        while b'\0' not in buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([from_r], [], [], left)[0]:
                raise TimeoutError('no answer to ' + method)
            chunk = os.read(from_r, 1 << 20)
            if not chunk:
                raise EOFError('chromium went away')
            buf += chunk
        raw, buf = buf.split(b'\0', 1)
        m = json.loads(raw)
        if m.get('id') == my:
            if 'error' in m:
                raise RuntimeError('%s: %s' % (method, m['error']))
            return m.get('result', {})
        event(m)


rc = 1
alerted = False
try:
    target = send('Target.createTarget', {'url': 'about:blank'})['targetId']
    s = send('Target.attachToTarget', {'targetId': target, 'flatten': True})['sessionId']
    send('Runtime.enable', session=s)
    send('Page.enable', session=s)
    send('Page.navigate', {'url': url}, session=s)
    while True:
        r = send('Runtime.evaluate', {'expression': '!!(%s)' % done, 'returnByValue': True},
                 session=s)
        if r.get('result', {}).get('value') is True or alerted:
            break
        if time.monotonic() > deadline:
            raise TimeoutError('waiting for: ' + done)
        time.sleep(0.2)
    html = send('Runtime.evaluate', {'expression': 'document.documentElement.outerHTML',
                                     'returnByValue': True}, session=s)['result']['value']
    sys.stdout.write(html)
    rc = 0
except Exception as e:
    log('cdp: %s' % e)
finally:
    try:
        send('Browser.close', wait=False)
    except OSError:
        pass
    try:
        p.wait(timeout=20)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
    subprocess.run(['rm', '-rf', prof])
sys.exit(rc)
