"""The charts of the chart previews' Playwright test, written as a person's run would
write them with Plotly, Bokeh and Altair, each loading its library from its CDN; and
where this venv keeps Plotly's and Bokeh's own copies of those libraries (Altair's Vega
comes from npm). Prints one JSON object. Run with .tools/charts/bin/python."""

import json
import os
import re

import altair as alt
import bokeh
import plotly
import plotly.graph_objects as go
from bokeh.embed import file_html
from bokeh.plotting import figure
from bokeh.resources import CDN

plotly_html = go.Figure(go.Bar(x=["north", "south"], y=[2, 3])).to_html(include_plotlyjs="cdn", full_html=True)
bars = figure(width=300, height=200, title="two bars")
bars.vbar(x=[1, 2], top=[2, 3], width=0.5)
bokeh_html = file_html(bars, CDN, "two bars")
values = [{"k": "north", "v": 2}, {"k": "south", "v": 3}]
altair_html = alt.Chart(alt.Data(values=values)).mark_bar().encode(x="k:N", y="v:Q").to_html()


def script(html, host):
    return re.search(r'src="(https://%s/[^"]+)"' % re.escape(host), html).group(1)


print(
    json.dumps(
        {
            "charts": {"plotly.html": plotly_html, "bokeh.html": bokeh_html, "altair.html": altair_html},
            "files": {
                script(plotly_html, "cdn.plot.ly"): os.path.join(
                    os.path.dirname(plotly.__file__), "package_data", "plotly.min.js"
                ),
                script(bokeh_html, "cdn.bokeh.org"): os.path.join(
                    os.path.dirname(bokeh.__file__), "server", "static", "js", "bokeh.min.js"
                ),
            },
            "npm": re.findall(r'src="(https://cdn\.jsdelivr\.net/npm/[^"]+)"', altair_html),
        }
    )
)
