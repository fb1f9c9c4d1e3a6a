# Regenerates testdata/streams/*.sse (run from backend/meter): python3 testdata/streams/gen_streams.py
# then: go test -run TestStreamGoldens -update . and review the diff.
import json
d='testdata/streams/'
def chunk(content=None, reasoning=None, usage="null", choices=True, role=False):
    delta={}
    if role: delta["role"]="assistant"
    if content is not None: delta["content"]=content
    if reasoning is not None: delta["reasoning_content"]=reasoning
    obj={"id":"chatcmpl-demo","object":"chat.completion.chunk","created":1764400000,"model":"demo",
         "choices":[{"index":0,"delta":delta,"finish_reason":None}] if choices else []}
    s=json.dumps(obj,ensure_ascii=False,separators=(',',':'))
    if usage is not None:
        s=s[:-1]+',"usage":'+usage+'}'
    return s
def U(p,c,t=None):
    t=p+c if t is None else t
    return '{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d}'%(p,c,t)
def ev(data, nl="\n"):
    return "data: "+data+nl+nl
def w(name, s):
    open(d+name+".sse","wb").write(s.encode())
usage_shaped='{"usage":{"prompt_tokens":0,"completion_tokens":0,"total_tokens":0}}'
w("seed000_trusted", ev(chunk("",role=True))+ev(chunk("你好"))+ev(chunk(" AI"))+ev(chunk(usage=U(6,9),choices=False))+ev("[DONE]"))
w("seed000_trusted_client_usage", ev(chunk("",role=True))+ev(chunk("你好"))+ev(chunk(" AI"))+ev(chunk(usage=U(6,9),choices=False))+ev("[DONE]"))
w("seed000_cut_after_part", ev(chunk("",role=True))+ev(chunk("part")))
w("seed000_missing_usage", ev(chunk("你好",usage=None))+ev(chunk(" AI",usage=None))+ev("[DONE]"))
w("seed000_false_usage", ev(chunk("你好"))+ev(chunk(" AI"))+ev(chunk(usage=U(6,0),choices=False))+ev("[DONE]"))
w("seed000_usage_shaped_text", ev(chunk(usage_shaped[:20]))+ev(chunk(usage_shaped[20:]))+ev(chunk(usage=U(2,len(usage_shaped)),choices=False))+ev("[DONE]"))
w("crlf_keepalive_multiline", ": ping\r\n\r\n"+ "data: "+chunk("你好")+"\r\n\r\n" + ":\r\n\r\n" +
  "data: {\"choices\":[{\"index\":0,\r\ndata: \"delta\":{\"content\":\" AI\"}}]}\r\n\r\n" +
  "data: "+chunk(usage=U(6,9),choices=False)+"\r\n\r\n" + ": keep-alive\r\n\r\n" + "data: [DONE]\r\n\r\n")
w("cr_only", ev(chunk("你好"),"\r")+ev(chunk(" AI"),"\r")+ev(chunk(usage=U(6,9),choices=False),"\r")+ev("[DONE]","\r"))
w("done_without_blank_line", ev(chunk("你好"))+ev(chunk(" AI"))+ev(chunk(usage=U(6,9),choices=False))+"data: [DONE]\n")
w("data_after_done", ev(chunk("你好"))+ev(chunk(" AI"))+ev(chunk(usage=U(6,9),choices=False))+ev("[DONE]")+ev(chunk("!")))
w("malformed_chunk", ev(chunk("你好"))+ev('{"choices":[{"delta":{"content":" AI"')+ev(chunk(usage=U(6,9),choices=False))+ev("[DONE]"))
w("bad_usage_negative", ev(chunk("你好"))+ev(chunk(" AI"))+ev(chunk(usage='{"prompt_tokens":6,"completion_tokens":-9,"total_tokens":-3}',choices=False))+ev("[DONE]"))
w("upstream_error_event", ev(chunk("你好"))+"event: error\n"+ev('{"error":{"message":"upstream overloaded","type":"server_error","code":"upstream_interrupted"}}'))
w("reasoning_then_content", ev(chunk(reasoning="想想"))+ev(chunk(reasoning="。"))+ev(chunk("你好 AI"))+ev(chunk(usage=U(6,18),choices=False))+ev("[DONE]"))
w("cumulative_usage_last_wins", ev(chunk("你好",usage=U(6,6)))+ev(chunk(" AI",usage=U(6,9)))+ev("[DONE]"))
w("tiktoken_trusted", ev(chunk("",role=True))+ev(chunk("tiktoken"))+ev(chunk(" is"))+ev(chunk(" great!"))+ev(chunk(usage=U(20,6),choices=False))+ev("[DONE]"))
w("tiktoken_completion_below_text", ev(chunk("tiktoken"))+ev(chunk(" is"))+ev(chunk(" great!"))+ev(chunk(usage=U(20,3),choices=False))+ev("[DONE]"))
w("tiktoken_prompt_out_of_band", ev(chunk("tiktoken is great!"))+ev(chunk(usage=U(1,6),choices=False))+ev("[DONE]"))
w("cut_inside_event", ev(chunk("你好"))+"data: "+chunk(" AI")+"\n")
w("cut_mid_json", ev(chunk("你好"))+'data: {"choices":[{"delta":{"content":" A')
def tool_chunk(name, args):
    fn={}
    if name is not None: fn["name"]=name
    fn["arguments"]=args
    obj={"id":"chatcmpl-demo","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"type":"function","function":fn}]},"finish_reason":None}],"usage":None}
    return json.dumps(obj,ensure_ascii=False,separators=(',',':'))
w("tool_call_arguments", ev(tool_chunk("get_weather",""))+ev(tool_chunk(None,'{"city":'))+ev(tool_chunk(None,'"巴黎"}'))+ev(chunk(usage=U(6,11+9+8),choices=False))+ev("[DONE]"))
