import json,re,sys
def load(p): return json.load(open(p))
def norm(path):
    return re.sub(r"\{[a-z_]*id\}", "{id}", re.sub(r"\{message_id\}","{messageId}",path))
def resolve(doc, s, depth=0):
    if not isinstance(s, dict): return s
    if '$ref' in s:
        name=s['$ref'].split('/')[-1]
        return resolve(doc, doc['components']['schemas'][name], depth)
    if 'anyOf' in s:
        non=[x for x in s['anyOf'] if x.get('type')!='null']
        if len(non)==1: return resolve(doc, non[0], depth)
    return s
def props(doc, s, prefix="", depth=0):
    s=resolve(doc,s)
    out={}
    if not isinstance(s,dict): return out
    if s.get('type')=='array' and 'items' in s:
        return props(doc, s['items'], prefix+"[]", depth)
    for k,v in (s.get('properties') or {}).items():
        r=resolve(doc,v)
        t=r.get('type') if isinstance(r,dict) else None
        out[prefix+k]=(t, k in (s.get('required') or []), tuple(r.get('enum',[])) if isinstance(r,dict) else ())
        if depth<2: out.update(props(doc, v, prefix+k+".", depth+1))
    return out
for v in ['v3','v4']:
    off=load(f'off-{v}.json'); ours=load(f'ours-{v}.json')
    ourpaths={norm(p.replace(f'/api/{v}','')):p for p in ours['paths']}
    for p,ops in off['paths'].items():
        if p.startswith('/boxes') : continue
        np_=norm(p)
        for m,op in ops.items():
            if m not in ('get','post','put','patch','delete'): continue
            if np_ not in ourpaths or m not in ours['paths'][ourpaths[np_]]:
                print(f"{v} MISSING {m.upper()} {p}"); continue
            oop=ours['paths'][ourpaths[np_]][m]
            # query params
            qo={x['name'] for x in op.get('parameters',[]) if x['in']=='query'}
            qu={x['name'] for x in oop.get('parameters',[]) if x['in']=='query'}
            if qo-qu: print(f"{v} {m.upper()} {p}: query params missing: {qo-qu}")
            if qu-qo: print(f"{v} {m.upper()} {p}: query params extra: {qu-qo}")
            ho={x['name'] for x in op.get('parameters',[]) if x['in']=='header'}
            hu={x['name'] for x in oop.get('parameters',[]) if x['in']=='header'}
            if ho-hu: print(f"{v} {m.upper()} {p}: header params missing: {ho-hu}")
            # body
            bo=op.get('requestBody',{}).get('content',{}).get('application/json',{}).get('schema')
            bu=oop.get('requestBody',{}).get('content',{}).get('application/json',{}).get('schema')
            if bo:
                po=props(off,bo); pu=props(ours,bu) if bu else {}
                miss=[k for k in po if k not in pu]
                if miss: print(f"{v} {m.upper()} {p}: body fields missing: {miss}")
            # responses
            for code,resp in op.get('responses',{}).items():
                if not code.startswith('2'): continue
                so=resp.get('content',{}).get('application/json',{}).get('schema')
                ru=oop.get('responses',{}).get(code)
                if ru is None: print(f"{v} {m.upper()} {p}: status {code} not in ours ({list(oop.get('responses',{}).keys())})"); continue
                su=ru.get('content',{}).get('application/json',{}).get('schema')
                if so:
                    po=props(off,so); pu=props(ours,su) if su else {}
                    miss=[k for k in po if k not in pu]
                    extra=[k for k in pu if k not in po]
                    diff=[k for k in po if k in pu and (po[k][0]!=pu[k][0] or po[k][1]!=pu[k][1])]
                    if miss: print(f"{v} {m.upper()} {p} {code}: resp fields missing: {miss}")
                    if extra: print(f"{v} {m.upper()} {p} {code}: resp fields extra: {extra}")
                    if diff: print(f"{v} {m.upper()} {p} {code}: differ: {[(k,po[k],pu[k]) for k in diff]}")
            # error codes
            eo={c for c in op.get('responses',{}) if not c.startswith('2')}
            eu={c for c in oop.get('responses',{}) if not c.startswith('2')}
            if eo-eu: print(f"{v} {m.upper()} {p}: error codes not in ours: {sorted(eo-eu)}")
