"""The app's tabs, one module each: widgets wired to package functions (gradio lives here
and in app.py only). ``common`` holds what every tab shares: the labels' ``gr.I18n``.
"""
