<svg xmlns="http://www.w3.org/2000/svg" width="990" height="952" viewBox="0 0 990 952" font-family="Helvetica, Arial, sans-serif" font-size="11">
<rect width="990" height="952" fill="#ffffff"/>
<text x="110" y="22" font-size="15" font-weight="bold">When do the writes hit the server? Write-arrival histograms, OCC thundering herd</text>
<text x="110" y="40" fill="#444">Writes per ms per run, all runs of each cell; columns share the time axis. Spikes = clients still in lock-step (little or no jitter). Model has no server overload.</text>
<text x="240" y="58" text-anchor="middle" font-weight="bold">10 clients</text>
<text x="100" y="133" text-anchor="end" font-weight="bold">none</text>
<rect x="110" y="84" width="260" height="90" fill="#f7f7f7" stroke="#ccc"/>
<path d="" fill="#2b6cb0"/>
<text x="110" y="79" fill="#333">1.00 calls, done 1 ms</text>
<text x="366" y="96" text-anchor="end" fill="#555">top = 0.00 writes/ms/run</text>
<line x1="110" y1="174" x2="110" y2="178" stroke="#888"/>
<text x="110" y="189" text-anchor="start" fill="#555">0 ms</text>
<line x1="240" y1="174" x2="240" y2="178" stroke="#888"/>
<text x="240" y="189" text-anchor="middle" fill="#555">1 ms</text>
<line x1="370" y1="174" x2="370" y2="178" stroke="#888"/>
<text x="370" y="189" text-anchor="end" fill="#555">1 ms</text>
<text x="100" y="271" text-anchor="end" font-weight="bold">expo</text>
<rect x="110" y="222" width="260" height="90" fill="#f7f7f7" stroke="#ccc"/>
<path d="" fill="#2b6cb0"/>
<text x="110" y="217" fill="#333">1.00 calls, done 1 ms</text>
<text x="366" y="234" text-anchor="end" fill="#555">top = 0.00 writes/ms/run</text>
<line x1="110" y1="312" x2="110" y2="316" stroke="#888"/>
<text x="110" y="327" text-anchor="start" fill="#555">0 ms</text>
<line x1="240" y1="312" x2="240" y2="316" stroke="#888"/>
<text x="240" y="327" text-anchor="middle" fill="#555">1 ms</text>
<line x1="370" y1="312" x2="370" y2="316" stroke="#888"/>
<text x="370" y="327" text-anchor="end" fill="#555">1 ms</text>
<text x="100" y="409" text-anchor="end" font-weight="bold">codex</text>
<rect x="110" y="360" width="260" height="90" fill="#f7f7f7" stroke="#ccc"/>
<path d="" fill="#2b6cb0"/>
<text x="110" y="355" fill="#333">1.00 calls, done 1 ms</text>
<text x="366" y="372" text-anchor="end" fill="#555">top = 0.00 writes/ms/run</text>
<line x1="110" y1="450" x2="110" y2="454" stroke="#888"/>
<text x="110" y="465" text-anchor="start" fill="#555">0 ms</text>
<line x1="240" y1="450" x2="240" y2="454" stroke="#888"/>
<text x="240" y="465" text-anchor="middle" fill="#555">1 ms</text>
<line x1="370" y1="450" x2="370" y2="454" stroke="#888"/>
<text x="370" y="465" text-anchor="end" fill="#555">1 ms</text>
<text x="100" y="547" text-anchor="end" font-weight="bold">equal</text>
<rect x="110" y="498" width="260" height="90" fill="#f7f7f7" stroke="#ccc"/>
<path d="" fill="#2b6cb0"/>
<text x="110" y="493" fill="#333">1.00 calls, done 1 ms</text>
<text x="366" y="510" text-anchor="end" fill="#555">top = 0.00 writes/ms/run</text>
<line x1="110" y1="588" x2="110" y2="592" stroke="#888"/>
<text x="110" y="603" text-anchor="start" fill="#555">0 ms</text>
<line x1="240" y1="588" x2="240" y2="592" stroke="#888"/>
<text x="240" y="603" text-anchor="middle" fill="#555">1 ms</text>
<line x1="370" y1="588" x2="370" y2="592" stroke="#888"/>
<text x="370" y="603" text-anchor="end" fill="#555">1 ms</text>
<text x="100" y="685" text-anchor="end" font-weight="bold">full</text>
<rect x="110" y="636" width="260" height="90" fill="#f7f7f7" stroke="#ccc"/>
<path d="" fill="#2b6cb0"/>
<text x="110" y="631" fill="#333">1.00 calls, done 1 ms</text>
<text x="366" y="648" text-anchor="end" fill="#555">top = 0.00 writes/ms/run</text>
<line x1="110" y1="726" x2="110" y2="730" stroke="#888"/>
<text x="110" y="741" text-anchor="start" fill="#555">0 ms</text>
<line x1="240" y1="726" x2="240" y2="730" stroke="#888"/>
<text x="240" y="741" text-anchor="middle" fill="#555">1 ms</text>
<line x1="370" y1="726" x2="370" y2="730" stroke="#888"/>
<text x="370" y="741" text-anchor="end" fill="#555">1 ms</text>
<text x="100" y="823" text-anchor="end" font-weight="bold">decorrelated</text>
<rect x="110" y="774" width="260" height="90" fill="#f7f7f7" stroke="#ccc"/>
<path d="" fill="#2b6cb0"/>
<text x="110" y="769" fill="#333">1.00 calls, done 1 ms</text>
<text x="366" y="786" text-anchor="end" fill="#555">top = 0.00 writes/ms/run</text>
<line x1="110" y1="864" x2="110" y2="868" stroke="#888"/>
<text x="110" y="879" text-anchor="start" fill="#555">0 ms</text>
<line x1="240" y1="864" x2="240" y2="868" stroke="#888"/>
<text x="240" y="879" text-anchor="middle" fill="#555">1 ms</text>
<line x1="370" y1="864" x2="370" y2="868" stroke="#888"/>
<text x="370" y="879" text-anchor="end" fill="#555">1 ms</text>
<text x="530" y="58" text-anchor="middle" font-weight="bold">50 clients</text>
<rect x="400" y="84" width="260" height="90" fill="#f7f7f7" stroke="#ccc"/>
<path d="" fill="#2b6cb0"/>
<text x="400" y="79" fill="#333">1.00 calls, done 1 ms</text>
<text x="656" y="96" text-anchor="end" fill="#555">top = 0.00 writes/ms/run</text>
<line x1="400" y1="174" x2="400" y2="178" stroke="#888"/>
<text x="400" y="189" text-anchor="start" fill="#555">0 ms</text>
<line x1="530" y1="174" x2="530" y2="178" stroke="#888"/>
<text x="530" y="189" text-anchor="middle" fill="#555">1 ms</text>
<line x1="660" y1="174" x2="660" y2="178" stroke="#888"/>
<text x="660" y="189" text-anchor="end" fill="#555">1 ms</text>
<rect x="400" y="222" width="260" height="90" fill="#f7f7f7" stroke="#ccc"/>
<path d="" fill="#2b6cb0"/>
<text x="400" y="217" fill="#333">1.00 calls, done 1 ms</text>
<text x="656" y="234" text-anchor="end" fill="#555">top = 0.00 writes/ms/run</text>
<line x1="400" y1="312" x2="400" y2="316" stroke="#888"/>
<text x="400" y="327" text-anchor="start" fill="#555">0 ms</text>
<line x1="530" y1="312" x2="530" y2="316" stroke="#888"/>
<text x="530" y="327" text-anchor="middle" fill="#555">1 ms</text>
<line x1="660" y1="312" x2="660" y2="316" stroke="#888"/>
<text x="660" y="327" text-anchor="end" fill="#555">1 ms</text>
<rect x="400" y="360" width="260" height="90" fill="#f7f7f7" stroke="#ccc"/>
<path d="" fill="#2b6cb0"/>
<text x="400" y="355" fill="#333">1.00 calls, done 1 ms</text>
<text x="656" y="372" text-anchor="end" fill="#555">top = 0.00 writes/ms/run</text>
<line x1="400" y1="450" x2="400" y2="454" stroke="#888"/>
<text x="400" y="465" text-anchor="start" fill="#555">0 ms</text>
<line x1="530" y1="450" x2="530" y2="454" stroke="#888"/>
<text x="530" y="465" text-anchor="middle" fill="#555">1 ms</text>
<line x1="660" y1="450" x2="660" y2="454" stroke="#888"/>
<text x="660" y="465" text-anchor="end" fill="#555">1 ms</text>
<rect x="400" y="498" width="260" height="90" fill="#f7f7f7" stroke="#ccc"/>
<path d="" fill="#2b6cb0"/>
<text x="400" y="493" fill="#333">1.00 calls, done 1 ms</text>
<text x="656" y="510" text-anchor="end" fill="#555">top = 0.00 writes/ms/run</text>
<line x1="400" y1="588" x2="400" y2="592" stroke="#888"/>
<text x="400" y="603" text-anchor="start" fill="#555">0 ms</text>
<line x1="530" y1="588" x2="530" y2="592" stroke="#888"/>
<text x="530" y="603" text-anchor="middle" fill="#555">1 ms</text>
<line x1="660" y1="588" x2="660" y2="592" stroke="#888"/>
<text x="660" y="603" text-anchor="end" fill="#555">1 ms</text>
<rect x="400" y="636" width="260" height="90" fill="#f7f7f7" stroke="#ccc"/>
<path d="" fill="#2b6cb0"/>
<text x="400" y="631" fill="#333">1.00 calls, done 1 ms</text>
<text x="656" y="648" text-anchor="end" fill="#555">top = 0.00 writes/ms/run</text>
<line x1="400" y1="726" x2="400" y2="730" stroke="#888"/>
<text x="400" y="741" text-anchor="start" fill="#555">0 ms</text>
<line x1="530" y1="726" x2="530" y2="730" stroke="#888"/>
<text x="530" y="741" text-anchor="middle" fill="#555">1 ms</text>
<line x1="660" y1="726" x2="660" y2="730" stroke="#888"/>
<text x="660" y="741" text-anchor="end" fill="#555">1 ms</text>
<rect x="400" y="774" width="260" height="90" fill="#f7f7f7" stroke="#ccc"/>
<path d="" fill="#2b6cb0"/>
<text x="400" y="769" fill="#333">1.00 calls, done 1 ms</text>
<text x="656" y="786" text-anchor="end" fill="#555">top = 0.00 writes/ms/run</text>
<line x1="400" y1="864" x2="400" y2="868" stroke="#888"/>
<text x="400" y="879" text-anchor="start" fill="#555">0 ms</text>
<line x1="530" y1="864" x2="530" y2="868" stroke="#888"/>
<text x="530" y="879" text-anchor="middle" fill="#555">1 ms</text>
<line x1="660" y1="864" x2="660" y2="868" stroke="#888"/>
<text x="660" y="879" text-anchor="end" fill="#555">1 ms</text>
<text x="820" y="58" text-anchor="middle" font-weight="bold">100 clients</text>
<rect x="690" y="84" width="260" height="90" fill="#f7f7f7" stroke="#ccc"/>
<path d="" fill="#2b6cb0"/>
<text x="690" y="79" fill="#333">1.00 calls, done 1 ms</text>
<text x="946" y="96" text-anchor="end" fill="#555">top = 0.00 writes/ms/run</text>
<line x1="690" y1="174" x2="690" y2="178" stroke="#888"/>
<text x="690" y="189" text-anchor="start" fill="#555">0 ms</text>
<line x1="820" y1="174" x2="820" y2="178" stroke="#888"/>
<text x="820" y="189" text-anchor="middle" fill="#555">1 ms</text>
<line x1="950" y1="174" x2="950" y2="178" stroke="#888"/>
<text x="950" y="189" text-anchor="end" fill="#555">1 ms</text>
<rect x="690" y="222" width="260" height="90" fill="#f7f7f7" stroke="#ccc"/>
<path d="" fill="#2b6cb0"/>
<text x="690" y="217" fill="#333">1.00 calls, done 1 ms</text>
<text x="946" y="234" text-anchor="end" fill="#555">top = 0.00 writes/ms/run</text>
<line x1="690" y1="312" x2="690" y2="316" stroke="#888"/>
<text x="690" y="327" text-anchor="start" fill="#555">0 ms</text>
<line x1="820" y1="312" x2="820" y2="316" stroke="#888"/>
<text x="820" y="327" text-anchor="middle" fill="#555">1 ms</text>
<line x1="950" y1="312" x2="950" y2="316" stroke="#888"/>
<text x="950" y="327" text-anchor="end" fill="#555">1 ms</text>
<rect x="690" y="360" width="260" height="90" fill="#f7f7f7" stroke="#ccc"/>
<path d="" fill="#2b6cb0"/>
<text x="690" y="355" fill="#333">1.00 calls, done 1 ms</text>
<text x="946" y="372" text-anchor="end" fill="#555">top = 0.00 writes/ms/run</text>
<line x1="690" y1="450" x2="690" y2="454" stroke="#888"/>
<text x="690" y="465" text-anchor="start" fill="#555">0 ms</text>
<line x1="820" y1="450" x2="820" y2="454" stroke="#888"/>
<text x="820" y="465" text-anchor="middle" fill="#555">1 ms</text>
<line x1="950" y1="450" x2="950" y2="454" stroke="#888"/>
<text x="950" y="465" text-anchor="end" fill="#555">1 ms</text>
<rect x="690" y="498" width="260" height="90" fill="#f7f7f7" stroke="#ccc"/>
<path d="" fill="#2b6cb0"/>
<text x="690" y="493" fill="#333">1.00 calls, done 1 ms</text>
<text x="946" y="510" text-anchor="end" fill="#555">top = 0.00 writes/ms/run</text>
<line x1="690" y1="588" x2="690" y2="592" stroke="#888"/>
<text x="690" y="603" text-anchor="start" fill="#555">0 ms</text>
<line x1="820" y1="588" x2="820" y2="592" stroke="#888"/>
<text x="820" y="603" text-anchor="middle" fill="#555">1 ms</text>
<line x1="950" y1="588" x2="950" y2="592" stroke="#888"/>
<text x="950" y="603" text-anchor="end" fill="#555">1 ms</text>
<rect x="690" y="636" width="260" height="90" fill="#f7f7f7" stroke="#ccc"/>
<path d="" fill="#2b6cb0"/>
<text x="690" y="631" fill="#333">1.00 calls, done 1 ms</text>
<text x="946" y="648" text-anchor="end" fill="#555">top = 0.00 writes/ms/run</text>
<line x1="690" y1="726" x2="690" y2="730" stroke="#888"/>
<text x="690" y="741" text-anchor="start" fill="#555">0 ms</text>
<line x1="820" y1="726" x2="820" y2="730" stroke="#888"/>
<text x="820" y="741" text-anchor="middle" fill="#555">1 ms</text>
<line x1="950" y1="726" x2="950" y2="730" stroke="#888"/>
<text x="950" y="741" text-anchor="end" fill="#555">1 ms</text>
<rect x="690" y="774" width="260" height="90" fill="#f7f7f7" stroke="#ccc"/>
<path d="" fill="#2b6cb0"/>
<text x="690" y="769" fill="#333">1.00 calls, done 1 ms</text>
<text x="946" y="786" text-anchor="end" fill="#555">top = 0.00 writes/ms/run</text>
<line x1="690" y1="864" x2="690" y2="868" stroke="#888"/>
<text x="690" y="879" text-anchor="start" fill="#555">0 ms</text>
<line x1="820" y1="864" x2="820" y2="868" stroke="#888"/>
<text x="820" y="879" text-anchor="middle" fill="#555">1 ms</text>
<line x1="950" y1="864" x2="950" y2="868" stroke="#888"/>
<text x="950" y="879" text-anchor="end" fill="#555">1 ms</text>
<text x="110" y="926" fill="#444">x: virtual time since all clients started. Above each panel: mean write calls and completion time per run.</text>
<text x="110" y="940" fill="#444">The first burst (t &lt; 35 ms, the same for every strategy) is clipped so the later structure shows.</text>
</svg>
